package nativeprompt

import (
	"fmt"
	"io/fs"
)

// executable: on Windows any regular file may be a program.
func executable(fs.FileInfo) bool { return true }

// platform is, on Windows: the policy's pinentry (Gpg4win's) when it
// names one; else the system's credential dialog and message boxes.
//
// Unproven: compiled but never run by fillgate's tests.
func platform(cfg Config) (backend, error) {
	if cfg.Program != "" {
		p, err := namedProgram(cfg.Program)
		if err != nil {
			return nil, err
		}
		return newPinentry(p, dialogEnv(cfg.Env)), nil
	}
	b := newWinBackend()
	if err := b.load(); err != nil {
		return nil, fmt.Errorf("the Windows credential dialog is not available here (%v); %s", err, policyFix)
	}
	return b, nil
}
