package policy

import "io/fs"

// checkOwner does nothing on Windows: the policy file lives in the user's
// profile, whose ACL already keeps other users out.
func checkOwner(path string, fi fs.FileInfo) error {
	return nil
}
