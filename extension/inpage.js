function fillgateInPage(op, arg) { return null; }
