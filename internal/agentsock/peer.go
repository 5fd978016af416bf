package agentsock

import "errors"

// errForeignPeer means the process on the other end runs as another user.
var errForeignPeer = errors.New("the peer runs as another user")
