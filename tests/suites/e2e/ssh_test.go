//go:build linux

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/browserproc"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// farEnd is the agent's machine: its own HOME and XDG dirs, and the
// forwarded socket.
type farEnd struct {
	*rig
	socket string
}

// fill runs `fillgate fill --json --socket <forwarded socket>` there.
func (f *farEnd) fill(t testing.TB, ctx context.Context, args ...string) *agent {
	return f.rig.fill(t, ctx, append([]string{"--socket", f.socket}, args...)...)
}

// startSSHForward forwards a socket of a new far-end rig to local's
// agent.sock with `ssh -R`, and waits until the forward answers.
func startSSHForward(t testing.TB, ctx context.Context, local *rig) *farEnd {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("sshd not found: run apt-get install -y openssh-server")
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation directory.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keygen := func(name string) string {
		key := filepath.Join(dir, name)
		if out, err := exec.CommandContext(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
		return key
	}
	hostKey, userKey := keygen("host_key"), keygen("user_key")
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	authorized := write("authorized_keys", read(userKey+".pub"))
	config := write("sshd_config", strings.Join([]string{
		"HostKey " + hostKey,
		"AuthorizedKeysFile " + authorized,
		"PidFile none",
		"StrictModes no",
		"UsePAM no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"PermitRootLogin prohibit-password",
		"AllowStreamLocalForwarding yes",
		"StreamLocalBindUnlink yes",
		"X11Forwarding no",
		"PermitTTY no",
		"LogLevel ERROR",
	}, "\n"))

	// sshd in inetd mode on each connection the test accepts: no port to
	// race for.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f, err := c.(*net.TCPConn).File()
			c.Close()
			if err != nil {
				continue
			}
			cmd := exec.Command(sshd, "-i", "-e", "-f", config)
			cmd.Stdin, cmd.Stdout = f, f
			p, err := browserproc.StartGroup(cmd)
			f.Close()
			if err == nil {
				t.Cleanup(p.Stop)
			}
		}
	}()
	known := write("known_hosts", fmt.Sprintf("[127.0.0.1]:%d %s", port, read(hostKey+".pub")))

	far := &farEnd{rig: newRig(t)}
	if err := os.MkdirAll(far.runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	far.socket = filepath.Join(far.runDir, "forwarded.sock")
	ssh := exec.Command("ssh", "-F", "/dev/null", "-N", "-T",
		"-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile="+known,
		"-o", "IdentitiesOnly=yes", "-i", userKey, "-o", "ExitOnForwardFailure=yes",
		"-p", fmt.Sprint(port), "-R", far.socket+":"+filepath.Join(local.runDir, "agent.sock"),
		me.Username+"@127.0.0.1")
	ssh.Env = local.env // ssh runs on the person's machine
	var sshErr syncbuf.Buffer
	ssh.Stderr = &sshErr
	p, err := browserproc.StartGroup(ssh)
	if err != nil {
		t.Fatalf("start ssh: %v", err)
	}
	t.Cleanup(p.Stop)

	// The forward is up once the far end's socket answers.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := poll.Until(wait, 50*time.Millisecond, func() (bool, error) {
		select {
		case <-p.Done():
			t.Fatalf("ssh exited: %s", sshErr.String())
		default:
		}
		c, err := net.Dial("unix", far.socket)
		if err == nil {
			c.Close()
		}
		return err == nil, err
	}); err != nil {
		t.Fatalf("the ssh forward did not come up (%v): %s", err, sshErr.String())
	}
	return far
}
