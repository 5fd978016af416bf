// Command fillgate types a password or one-time code into the focused login
// field of the user's own browser without the agent that asked ever seeing
// it.
//
// Started by a browser (with a `chrome-extension://…/` argument, or a
// manifest path and an add-on id), it is the native-messaging host.
// Otherwise it is a CLI; run `fillgate --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/nmhost"
)

// cli is the command line. Each command's Run does the work.
type cli struct {
	Fill      fillCmd      `cmd:"" help:"Ask the human for a secret and type it into the focused field of their browser. The agent gets a status, never the value."`
	MCP       mcpCmd       `cmd:"" name:"mcp" help:"Run an MCP stdio server with one tool, request_secret."`
	Status    statusCmd    `cmd:"" help:"List the browsers that run fillgate's extension, with their profiles and active tabs."`
	Install   installCmd   `cmd:"" help:"Write native-messaging host manifests for your browsers and unpack the extension."`
	Uninstall uninstallCmd `cmd:"" help:"Remove exactly what install wrote."`
	Doctor    doctorCmd    `cmd:"" help:"Check the set-up, one line per check, with the fix for anything wrong."`
	Policy    policyCmd    `cmd:"" help:"Work with the policy file."`
	Audit     auditCmd     `cmd:"" help:"Show recent requests and their outcomes (never values)."`
	Remember  rememberCmd  `cmd:"" help:"Store a password or TOTP seed in the OS keyring, typed at the terminal (never echoed) or piped in."`
	Saved     savedCmd     `cmd:"" help:"List what is remembered in the OS keyring: service, field kind, account (never values)."`
	Forget    forgetCmd    `cmd:"" help:"Remove remembered secrets from the OS keyring."`
	Passkey   passkeyCmd   `cmd:"" help:"Passkeys for your agents: add one on a site (fillgate passkey add); agents sign in with fillgate fill --field passkey."`
	Demo      demoCmd      `cmd:"" help:"A tour: Chromium with a throw-away profile, the extension, a local login page, one fill."`
	Version   versionCmd   `cmd:"" help:"Print the version."`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signalContext()
	if manifest.LooksLikeHost(args) {
		// Chromium closes a host's pipes and then sends it SIGTERM; the
		// host may have finished by then. Its stop signals stay caught
		// until the process exits, so a late one cannot turn a clean exit
		// into death by signal.
		return runHost(ctx, args, stdin, stdout, stderr)
	}
	defer stop()

	var c cli
	exit := -1
	parser, err := kong.New(&c,
		kong.Name("fillgate"),
		kong.Description("fillgate types a password or one-time code into the focused login field of your own browser; the agent that asked only ever gets a status."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintf(stderr, "fillgate: %v\n", err)
		return 1
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 { // --help
		return exit
	}
	if err != nil {
		fmt.Fprintf(stderr, "fillgate: %v\n", err)
		return fill.ExitUsage
	}
	a := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, env: os.Getenv}
	if err := kctx.Run(a); err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			return int(ec)
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "fillgate: %v\n", err)
			return fill.ExitUsage
		}
		fmt.Fprintf(stderr, "fillgate: %v\n", err)
		return 1
	}
	return 0
}

// runHost is native-messaging host mode: stdout is the protocol, so every
// message for a person goes to stderr (the browser's log).
func runHost(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	caller, err := manifest.ParseCaller(args, manifest.Listed())
	if err != nil {
		fmt.Fprintf(stderr, "fillgate host: %v\n", err)
		return 1
	}
	// The browser may close the pipes while the host still writes (an
	// outcome, a closing prompt): that is an EPIPE error to handle, not a
	// SIGPIPE that kills the host before it answers its agents.
	signal.Ignore(syscall.SIGPIPE)
	// A stop signal here comes from the browser (Chromium sends SIGTERM
	// to its hosts as it closes their port) or the session ending, not
	// from an agent: requests under way end as failed, the browser gone.
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(nmhost.ErrStopped) })
	defer stop()
	if err := nmhost.Run(hctx, nmhost.Config{Caller: caller, Stdin: stdin, Stdout: stdout}); err != nil {
		fmt.Fprintf(stderr, "fillgate host: %v\n", err)
		return 1
	}
	return 0
}

// stopSignals are the signals that end a run as the agent leaving: an
// interrupt, a request to terminate, and the terminal (or the agent's
// session) hanging up. Each ends a running request as cancelled, so it
// closes its prompt (and its prompt tab) before the process exits.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalContext is the context of the whole run: the first of
// stopSignals cancels it with fill.ErrAgentGone as the cause. Later ones
// are caught too, so the run can finish closing what it opened. stop
// releases the signals.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals...)
	go func() {
		select {
		case <-sigs:
			cancel(fill.ErrAgentGone)
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel(nil)
	}
}
