package drivable

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/windows/wine"
)

func TestChromiumFlags(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		reasons []string
		dir     string
	}{
		{"plain", []string{"/usr/lib/chromium/chromium", "--user-data-dir=/home/a/p", "https://example.test/"}, nil, "/home/a/p"},
		{"nothing", []string{"/usr/lib/chromium/chromium"}, nil, ""},
		{"empty", nil, nil, ""},
		{"port", []string{"chrome", "--remote-debugging-port=9222"},
			[]string{"the browser was started with --remote-debugging-port"}, ""},
		{"pipe and automation, one dash, any case", []string{"chrome", "-Remote-Debugging-Pipe", "--enable-automation"},
			[]string{"the browser was started with --remote-debugging-pipe", "the browser was started with --enable-automation (automation)"}, ""},
		{"address", []string{"chrome", "--remote-debugging-address=127.0.0.1"},
			[]string{"the browser was started with --remote-debugging-address"}, ""},
		{"another remote-debugging switch", []string{"chrome", "--remote-debugging-targets=x"},
			[]string{"the browser was started with a --remote-debugging switch"}, ""},
		{"after --, only URLs", []string{"chrome", "--user-data-dir=/p", "--", "--remote-debugging-port=1"}, nil, "/p"},
		{"a value is not a switch", []string{"chrome", "https://a.test/?x=--remote-debugging-port"}, nil, ""},
		{"once each", []string{"chrome", "--remote-debugging-port=1", "--remote-debugging-port=2"},
			[]string{"the browser was started with --remote-debugging-port"}, ""},
		// Chromium on Linux rewrites its process title: one string.
		{"title", []string{"/usr/lib/chromium/chromium --user-data-dir=/home/a/My Profile --remote-debugging-port=0 --headless=new about:blank"},
			[]string{"the browser was started with --remote-debugging-port"}, "/home/a/My Profile"},
		{"title without switches", []string{"/usr/lib/chromium/chromium --type=renderer"}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := browsertable.ReadCommandLine(manifest.Chromium, c.args)
			if got := switchReasons(manifest.Chromium, cl); !reflect.DeepEqual(got, c.reasons) {
				t.Errorf("reasons %q, want %q", got, c.reasons)
			}
			if cl.UserDataDir != c.dir {
				t.Errorf("user data dir %q, want %q", cl.UserDataDir, c.dir)
			}
		})
	}
}

func TestFirefoxFlags(t *testing.T) {
	cases := []struct {
		name           string
		args           []string
		reasons        []string
		profile, named string
	}{
		{"plain", []string{"/usr/lib/firefox-esr/firefox-esr", "-P", "work", "https://a.test/"}, nil, "", "work"},
		{"marionette, two dashes, any case", []string{"firefox", "--MARIONETTE", "-profile", "/tmp/rust_mozprofile"},
			[]string{"the browser was started with -marionette (WebDriver)"}, "/tmp/rust_mozprofile", ""},
		{"marionette, Windows slash", []string{`C:\Program Files\Mozilla Firefox\firefox.exe`, "/marionette"},
			[]string{"the browser was started with -marionette (WebDriver)"}, "", ""},
		{"remote agent with its port apart", []string{"firefox", "--remote-debugging-port", "9222", "--profile=/p"},
			[]string{"the browser was started with --remote-debugging-port (WebDriver BiDi)"}, "/p", ""},
		{"remote agent with =", []string{"firefox", "-remote-debugging-port=0"},
			[]string{"the browser was started with --remote-debugging-port (WebDriver BiDi)"}, "", ""},
		{"debugger server", []string{"firefox", "-start-debugger-server", "6000"},
			[]string{"the browser was started with -start-debugger-server"}, "", ""},
		{"a path is not a flag", []string{"firefox", "/marionette/x.html"}, nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := browsertable.ReadCommandLine(manifest.Firefox, c.args)
			if got := switchReasons(manifest.Firefox, cl); !reflect.DeepEqual(got, c.reasons) {
				t.Errorf("reasons %q, want %q", got, c.reasons)
			}
			if cl.Profile != c.profile {
				t.Errorf("profile %q, want %q", cl.Profile, c.profile)
			}
			if cl.ProfileName != c.named {
				t.Errorf("named profile %q, want %q", cl.ProfileName, c.named)
			}
		})
	}
}

// fakeEnv is an environment of its own for a Probe.
func fakeEnv(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// argv is a Config.Args that returns args for every pid.
func argv(args ...string) func(int) ([]string, error) {
	return func(int) ([]string, error) { return args, nil }
}

// clock is a fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// listenLoopback opens a real listener on 127.0.0.1 and returns its port;
// it closes with the test unless closed before.
func listenLoopback(t *testing.T) (net.Listener, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return l, l.Addr().(*net.TCPAddr).Port
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// wantReasons fails the test unless p's check finds exactly the reasons
// want, in order.
func wantReasons(t *testing.T, p *Probe, want ...string) {
	t.Helper()
	if got := p.Check(t.Context()).Reasons; !reflect.DeepEqual(got, want) {
		t.Errorf("Check found the reasons %q, want %q", got, want)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestNotDriven(t *testing.T) {
	dir := t.TempDir()
	p := New(Config{PID: 1, Family: manifest.Chromium, Args: argv("chromium", "--user-data-dir="+dir), Env: fakeEnv()})
	d := p.Check(t.Context())
	if d.Driven {
		t.Errorf("driven: got true, want false")
	}
	if len(d.Reasons) != 0 {
		t.Errorf("reasons %q, want none", d.Reasons)
	}
}

func TestDevToolsActivePortLiveThenStale(t *testing.T) {
	dir := t.TempDir()
	l, port := listenLoopback(t)
	writeFile(t, filepath.Join(dir, "DevToolsActivePort"), fmt.Sprintf("%d\n/devtools/browser/1234\n", port))
	clk := &clock{t: time.Unix(1000, 0)}
	// The process title Chromium rewrites, with no switch that drives it:
	// only the file says so.
	p := New(Config{PID: 1, Family: manifest.Chromium, Env: fakeEnv(), Now: clk.now,
		Args: argv("/usr/lib/chromium/chromium --user-data-dir=" + dir + " --headless=new")})

	d := p.Check(t.Context())
	if !d.Driven {
		t.Errorf("driven: got false, want true")
	}
	if want := []string{fmt.Sprintf("a DevTools endpoint is live on 127.0.0.1:%d (DevToolsActivePort)", port)}; !reflect.DeepEqual(d.Reasons, want) {
		t.Errorf("reasons %q, want %q", d.Reasons, want)
	}

	// The browser turned remote debugging off, but left the file: within
	// liveFor the last answer stands (polling does not dial each time)...
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !p.Check(t.Context()).Driven {
		t.Errorf("driven within liveFor after the endpoint closed: got false, want true")
	}
	// ...and after it the port refuses: the file is stale.
	clk.add(liveFor)
	d = p.Check(t.Context())
	if d.Driven {
		t.Errorf("driven after liveFor with the endpoint closed: got true, want false (reasons %q)", d.Reasons)
	}
}

func TestStalePortFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "DevToolsActivePort"), fmt.Sprintf("%d\n/devtools/browser/1\n", freePort(t)))
	p := New(Config{PID: 1, Family: manifest.Chromium, Env: fakeEnv(), Args: argv("chromium", "--user-data-dir="+dir)})
	if d := p.Check(t.Context()); d.Driven {
		t.Errorf("driven by a port nothing listens on: got true, want false (reasons %q)", d.Reasons)
	}
}

// TestMalformedPortFiles: a port file fillgate cannot make sense of does
// not rule out a live endpoint: the browser counts as drivable.
func TestMalformedPortFiles(t *testing.T) {
	for _, body := range []string{"", "x\n/devtools", "0\n", "70000\n", "-1\n"} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "DevToolsActivePort"), body)
		p := New(Config{PID: 1, Family: manifest.Chromium, Env: fakeEnv(), Args: argv("chromium", "--user-data-dir="+dir)})
		if !p.Check(t.Context()).Driven {
			t.Errorf("DevToolsActivePort %q: driven: got false, want true", body)
		}
	}
}

func TestCannotTellInTime(t *testing.T) {
	dir := t.TempDir()
	_, port := listenLoopback(t)
	writeFile(t, filepath.Join(dir, "DevToolsActivePort"), fmt.Sprintf("%d\n", port))
	p := New(Config{PID: 1, Family: manifest.Chromium, Env: fakeEnv(), Args: argv("chromium", "--user-data-dir="+dir)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d := p.Check(ctx)
	if !d.Driven {
		t.Errorf("driven: got false, want true")
	}
	if want := []string{"fillgate could not tell whether the endpoint in DevToolsActivePort is live"}; !reflect.DeepEqual(d.Reasons, want) {
		t.Errorf("reasons %q, want %q", d.Reasons, want)
	}
	// A check that could not finish is not remembered.
	wantReasons(t, p, fmt.Sprintf("a DevTools endpoint is live on 127.0.0.1:%d (DevToolsActivePort)", port))
}

func TestUnreadableCommandLine(t *testing.T) {
	cfg := t.TempDir()
	_, port := listenLoopback(t)
	unreadable := func(int) ([]string, error) { return nil, fmt.Errorf("no: %w", errors.ErrUnsupported) }
	cannot := "fillgate cannot read the browser's command line, so it cannot rule out remote debugging"

	p := New(Config{PID: 1, Family: manifest.Chromium, Name: "chromium", GOOS: "linux", Args: unreadable,
		Env: fakeEnv("HOME", t.TempDir(), "XDG_CONFIG_HOME", cfg)})
	if got, want := p.Check(t.Context()).Reasons, []string{cannot}; !reflect.DeepEqual(got, want) {
		t.Errorf("an unreadable command line is never 'not drivable': got the reasons %q, want %q", got, want)
	}

	// The default user data dir is still looked at.
	writeFile(t, filepath.Join(cfg, "chromium", "DevToolsActivePort"), fmt.Sprintf("%d\n/devtools/browser/x\n", port))
	p = New(Config{PID: 1, Family: manifest.Chromium, Name: "chromium", GOOS: "linux", Args: unreadable,
		Env: fakeEnv("HOME", t.TempDir(), "XDG_CONFIG_HOME", cfg)})
	d := p.Check(t.Context())
	if !d.Driven {
		t.Errorf("driven: got false, want true")
	}
	if want := []string{cannot, fmt.Sprintf("a DevTools endpoint is live on 127.0.0.1:%d (DevToolsActivePort)", port)}; !reflect.DeepEqual(d.Reasons, want) {
		t.Errorf("reasons %q, want %q", d.Reasons, want)
	}
}

func TestDefaultUserDataDir(t *testing.T) {
	_, port := listenLoopback(t)
	live := fmt.Sprintf("a DevTools endpoint is live on 127.0.0.1:%d (DevToolsActivePort)", port)
	t.Run("chrome://inspect's switch in Chrome's default profile", func(t *testing.T) {
		home := t.TempDir()
		writeFile(t, filepath.Join(home, ".config", "google-chrome", "DevToolsActivePort"), fmt.Sprintf("%d\n/devtools/browser/x\n", port))
		p := New(Config{PID: 1, Family: manifest.Chromium, Name: "chrome", GOOS: "linux", Args: argv("/opt/google/chrome/chrome"),
			Env: fakeEnv("HOME", home)})
		wantReasons(t, p, live)
	})
	t.Run("the executable picks the channel", func(t *testing.T) {
		home := t.TempDir()
		writeFile(t, filepath.Join(home, ".config", "google-chrome", "DevToolsActivePort"), fmt.Sprintf("%d\n", port))
		// Chrome Beta's executable is also called chrome: its own
		// directory is looked at, not stable's.
		// (FromSlash: the executable as the OS the test runs on reports it.)
		p := New(Config{PID: 1, Family: manifest.Chromium, Name: "chrome", GOOS: "linux", Exe: filepath.FromSlash("/opt/google/chrome-beta/chrome"),
			Args: argv("/opt/google/chrome-beta/chrome"), Env: fakeEnv("HOME", home)})
		if p.Check(t.Context()).Driven {
			t.Errorf("driven: got true, want false")
		}
		writeFile(t, filepath.Join(home, ".config", "google-chrome-beta", "DevToolsActivePort"), fmt.Sprintf("%d\n", port))
		wantReasons(t, p, live)
	})
	t.Run("CHROME_CONFIG_HOME", func(t *testing.T) {
		home, cch := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(cch, "chromium", "DevToolsActivePort"), fmt.Sprintf("%d\n", port))
		p := New(Config{PID: 1, Family: manifest.Chromium, Name: "chromium", GOOS: "linux", Args: argv("chromium"),
			Env: fakeEnv("HOME", home, "CHROME_CONFIG_HOME", cch)})
		wantReasons(t, p, live)
	})
	t.Run("Windows", func(t *testing.T) {
		local := t.TempDir()
		writeFile(t, filepath.Join(local, "Microsoft", "Edge", "User Data", "DevToolsActivePort"), fmt.Sprintf("%d\n", port))
		p := New(Config{PID: 1, Family: manifest.Chromium, Name: "edge", GOOS: "windows", Args: argv("msedge.exe"),
			Env: fakeEnv("LOCALAPPDATA", local, "USERPROFILE", t.TempDir())})
		wantReasons(t, p, live)
	})
	t.Run("an unknown browser: every one of the family", func(t *testing.T) {
		home := t.TempDir()
		writeFile(t, filepath.Join(home, ".config", "BraveSoftware", "Brave-Browser", "DevToolsActivePort"), fmt.Sprintf("%d\n", port))
		p := New(Config{PID: 1, Family: manifest.Chromium, Name: "thorium", GOOS: "linux", Args: argv("thorium"), Env: fakeEnv("HOME", home)})
		wantReasons(t, p, live)
	})
}

func TestFirefox(t *testing.T) {
	_, port := listenLoopback(t)
	t.Run("Marionette by its flag and its port file in -profile", func(t *testing.T) {
		prof := t.TempDir()
		writeFile(t, filepath.Join(prof, "MarionetteActivePort"), fmt.Sprintf("%d", port))
		p := New(Config{PID: 1, Family: manifest.Firefox, Env: fakeEnv(),
			Args: argv("/usr/lib/firefox-esr/firefox-esr", "-marionette", "-profile", prof)})
		wantReasons(t, p,
			"the browser was started with -marionette (WebDriver)",
			fmt.Sprintf("Marionette is live on 127.0.0.1:%d (MarionetteActivePort)", port),
		)
	})
	t.Run("MOZ_MARIONETTE", func(t *testing.T) {
		p := New(Config{PID: 1, Family: manifest.Firefox, Env: fakeEnv("MOZ_MARIONETTE", "1"), Args: argv("firefox", "-profile", t.TempDir())})
		wantReasons(t, p, "Marionette is on (MOZ_MARIONETTE is set)")
	})
	t.Run("WebDriver BiDi in the default profile", func(t *testing.T) {
		home := t.TempDir()
		root := filepath.Join(home, ".mozilla", "firefox")
		writeFile(t, filepath.Join(root, "profiles.ini"), strings.Join([]string{
			"[Install4F96D1932A9F858E]", "Default=abcd.default-release", "Locked=1", "",
			"[Profile1]", "Name=work", "IsRelative=1", "Path=work.x", "",
			"[Profile0]", "Name=default-release", "IsRelative=1", "Path=abcd.default-release", "Default=1", "",
			"[General]", "StartWithLastProfile=1", "Version=2", ""}, "\n"))
		writeFile(t, filepath.Join(root, "abcd.default-release", "WebDriverBiDiServer.json"),
			fmt.Sprintf(`{"ws_host": "127.0.0.1", "ws_port": %d}`, port))
		bidi := fmt.Sprintf("a WebDriver BiDi endpoint is live on 127.0.0.1:%d (WebDriverBiDiServer.json)", port)
		p := New(Config{PID: 1, Family: manifest.Firefox, Name: "firefox", GOOS: "linux", Args: argv("firefox"), Env: fakeEnv("HOME", home)})
		wantReasons(t, p, bidi)
		// -P work is another profile: its files, not the default's.
		p = New(Config{PID: 1, Family: manifest.Firefox, Name: "firefox", GOOS: "linux", Args: argv("firefox", "-P", "work"), Env: fakeEnv("HOME", home)})
		if p.Check(t.Context()).Driven {
			t.Errorf("driven: got true, want false")
		}
		writeFile(t, filepath.Join(root, "work.x", "MarionetteActivePort"), fmt.Sprintf("%d", port))
		wantReasons(t, p, fmt.Sprintf("Marionette is live on 127.0.0.1:%d (MarionetteActivePort)", port))
	})
	t.Run("stale files", func(t *testing.T) {
		prof := t.TempDir()
		free := freePort(t)
		writeFile(t, filepath.Join(prof, "MarionetteActivePort"), fmt.Sprintf("%d", free))
		writeFile(t, filepath.Join(prof, "WebDriverBiDiServer.json"), fmt.Sprintf(`{"ws_host": "127.0.0.1", "ws_port": %d}`, free))
		p := New(Config{PID: 1, Family: manifest.Firefox, Env: fakeEnv(), Args: argv("firefox", "--profile="+prof)})
		if p.Check(t.Context()).Driven {
			t.Errorf("driven: got true, want false")
		}
	})
}

func TestProfilesFromINI(t *testing.T) {
	root := t.TempDir()
	ini := filepath.Join(root, "profiles.ini")
	// Absolute paths as Firefox writes them on the OS the test runs on.
	a, b := "/abs/a", "/abs/b"
	if runtime.GOOS == "windows" {
		a, b = `C:\abs\a`, `C:\abs\b`
	}
	writeFile(t, ini, "[Profile0]\nName=a\nIsRelative=0\nPath="+a+"\nDefault=1\n\n[Install1]\nDefault="+b+"\n\n[Profile1]\nName=c\nIsRelative=1\nPath=Profiles/c\n")
	if got, want := profilesFromINI(ini, ""), []string{a, b}; !reflect.DeepEqual(got, want) {
		t.Errorf("profilesFromINI(ini, \"\") = %v, want %v", got, want)
	}
	if got, want := profilesFromINI(ini, "c"), []string{filepath.Join(root, "Profiles", "c")}; !reflect.DeepEqual(got, want) {
		t.Errorf("profilesFromINI(ini, \"c\") = %v, want %v", got, want)
	}
	if got := profilesFromINI(ini, "nobody"); len(got) != 0 {
		t.Errorf("profilesFromINI(ini, \"nobody\") = %v, want it empty", got)
	}
	if got := profilesFromINI(filepath.Join(root, "missing.ini"), ""); len(got) != 0 {
		t.Errorf("profilesFromINI(missing.ini, \"\") = %v, want it empty", got)
	}
}

func TestBrowserPID(t *testing.T) {
	// This test binary's parent is no shell a browser starts hosts through.
	if got, want := BrowserPID(os.Getppid()), os.Getppid(); got != want {
		t.Errorf("BrowserPID(os.Getppid()) = %v, want %v", got, want)
	}
	if !isShell("CMD.EXE") {
		t.Errorf("isShell(\"CMD.EXE\"): got false, want true")
	}
	if isShell("chrome.exe") {
		t.Errorf("isShell(\"chrome.exe\"): got true, want false")
	}
}

func TestOwnCommandLine(t *testing.T) {
	wine.Skip(t, "Wine 8 has no ProcessCommandLineInformation (NtQueryInformationProcess answers STATUS_INVALID_INFO_CLASS, 0xC0000003), so the host reports that it cannot read the browser's command line")
	// The real reader (procinfo on Linux and macOS, the NT query on
	// Windows) reads this very process.
	args, err := osArgs(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(args) == 0 {
		t.Fatalf("osArgs(own pid) is empty, want this process's command line")
	}
	if !reflect.DeepEqual(args[1:], os.Args[1:]) {
		t.Errorf("osArgs(own pid)[1:] = %q, want os.Args[1:] = %q", args[1:], os.Args[1:])
	}
}

func TestConcurrentChecks(t *testing.T) {
	dir := t.TempDir()
	_, port := listenLoopback(t)
	writeFile(t, filepath.Join(dir, "DevToolsActivePort"), fmt.Sprintf("%d\n", port))
	p := New(Config{PID: 1, Family: manifest.Chromium, Env: fakeEnv(), Args: argv("chromium", "--remote-debugging-port=0", "--user-data-dir="+dir)})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			d := p.Check(t.Context())
			if len(d.Reasons) != 2 {
				t.Errorf("reasons %q, want 2", d.Reasons)
			}
		})
	}
	wg.Wait()
}

// TestWhatCannotBeToldIsDriven: a port file that cannot be read or holds
// no port, and a host whose parent is not the browser (a sandbox's portal
// started it), all count as drivable.
func TestWhatCannotBeToldIsDriven(t *testing.T) {
	t.Run("a port file that holds no port", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "DevToolsActivePort"), "not a port\n")
		p := New(Config{PID: 1, Family: manifest.Chromium, Env: fakeEnv(), Args: argv("chromium", "--user-data-dir="+dir)})
		wantReasons(t, p, "DevToolsActivePort in the browser's profile holds no port fillgate can read, so it cannot rule out a live endpoint")
	})
	t.Run("a port file that cannot be read", func(t *testing.T) {
		dir := t.TempDir()
		// A directory where the file should be: reading it fails, and
		// not because it is missing.
		if err := os.Mkdir(filepath.Join(dir, "DevToolsActivePort"), 0o700); err != nil {
			t.Fatal(err)
		}
		p := New(Config{PID: 1, Family: manifest.Chromium, Env: fakeEnv(), Args: argv("chromium", "--user-data-dir="+dir)})
		wantReasons(t, p, "fillgate cannot read DevToolsActivePort in the browser's profile, so it cannot rule out a live endpoint")
	})
	t.Run("the host's parent is a sandbox's portal", func(t *testing.T) {
		for _, c := range []struct {
			family manifest.Family
			argv0  string
		}{
			{manifest.Firefox, "/usr/libexec/xdg-desktop-portal"},
			{manifest.Firefox, "/usr/libexec/xdg-native-messaging-proxy"},
			{manifest.Chromium, "/usr/bin/bwrap"},
		} {
			p := New(Config{PID: 1, Family: c.family, Env: fakeEnv(), Exe: c.argv0, Args: argv(c.argv0), Name: "firefox", GOOS: "linux"})
			d := p.Check(t.Context())
			if !d.Driven {
				t.Errorf("%s: driven: got false, want true", c.argv0)
			}
			const blind = "fillgate cannot see the browser's own process (something else, such as a sandbox's portal, started its host), so it cannot rule out remote debugging"
			if !slices.Contains(d.Reasons, blind) {
				t.Errorf("%s: reasons %q; want them to hold %q", c.argv0, d.Reasons, blind)
			}
		}
		// The browsers themselves, by their executables.
		for _, exe := range []string{"/usr/lib/chromium/chromium", "/opt/google/chrome/chrome", `C:\Program Files\Google\Chrome\Application\chrome.exe`, "/opt/brave.com/brave/brave"} {
			if !isBrowser(manifest.Chromium, exe, nil) {
				t.Errorf("isBrowser(Chromium, %q): got false, want true", exe)
			}
		}
		for _, exe := range []string{"/usr/lib/firefox-esr/firefox-esr", `C:\Program Files\Mozilla Firefox\firefox.exe`, "/usr/lib/librewolf/librewolf"} {
			if !isBrowser(manifest.Firefox, exe, nil) {
				t.Errorf("isBrowser(Firefox, %q): got false, want true", exe)
			}
		}
	})
	// macOS names a browser's executable as its bundle ("Google Chrome",
	// "Microsoft Edge"): the host's parent is then the browser itself, and
	// a browser with no debugging switch and no port file is not driven.
	t.Run("macOS browsers by their bundle's executable", func(t *testing.T) {
		for _, exe := range []string{
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
			"/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
			"/Applications/Arc.app/Contents/MacOS/Arc",
		} {
			p := New(Config{PID: 1, Family: manifest.Chromium, Env: fakeEnv("HOME", t.TempDir()), Exe: exe, Args: argv(exe), GOOS: "darwin"})
			if d := p.Check(t.Context()); d.Driven {
				t.Errorf("%s: driven for %q, want not driven", exe, d.Reasons)
			}
		}
	})
}

// TestWindowsSlashSwitches: Chromium on Windows takes its switches with a
// slash too.
func TestWindowsSlashSwitches(t *testing.T) {
	cl := browsertable.ReadCommandLine(manifest.Chromium, []string{`C:\Program Files\Google\Chrome\Application\chrome.exe`, "/remote-debugging-port=9222", `/user-data-dir=C:\p`, "/home/a/page.html"})
	if want := []string{"the browser was started with --remote-debugging-port"}; !reflect.DeepEqual(switchReasons(manifest.Chromium, cl), want) {
		t.Errorf("reasons %q, want %q", switchReasons(manifest.Chromium, cl), want)
	}
	if cl.UserDataDir != `C:\p` {
		t.Errorf("user data dir %q, want %q", cl.UserDataDir, `C:\p`)
	}
}
