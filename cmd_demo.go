package main

import (
	"time"

	"github.com/fillgate/fillgate/internal/demo"
)

type demoCmd struct {
	Headless bool          `help:"Run the browser without a window (the default when there is no display); the demo then answers the prompt itself."`
	Auto     bool          `help:"Let the demo answer the prompt itself with a made-up sample password."`
	Keep     bool          `help:"Leave the browser open and keep the temp dir."`
	Browser  string        `help:"A Chromium-family browser binary. Default: chromium, chromium-browser or google-chrome on PATH." placeholder:"PATH"`
	Timeout  time.Duration `default:"90s" help:"How long you have to answer the prompt."`
}

func (c *demoCmd) Run(a *app) error {
	res, err := demo.Run(a.ctx, demo.Options{
		Out: a.stdout, Browser: c.Browser, Headless: c.Headless || !demo.HasDisplay(),
		Auto: c.Auto, Keep: c.Keep, Timeout: c.Timeout,
	})
	if err != nil {
		return err
	}
	if code := res.Status.ExitCode(); code != 0 {
		return exitCode(code)
	}
	return nil
}
