// Package suite is the Windows suite tests/windows/run runs under Wine
// with the real fillgate.exe: install, doctor and uninstall read back
// through reg.exe, remember/saved/forget against the Credential Manager,
// the CLI's exit codes without a host, and host mode end to end over
// named pipes (the fake extension's native-messaging frames on the host's
// stdin and stdout, fillgate fill from another process, the loopback
// prompt answered over HTTP, a squatter on the agent pipe, the leak scan
// over the prefix). Its tests build for Windows only; FILLGATE_EXE names
// the binary.
package suite
