package manifest

// Version is fillgate's version: the binary's, and the extension's
// manifest.json "version" (a test keeps them equal).
const Version = "0.1.0"
