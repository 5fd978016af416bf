//go:build linux

package e2e

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// updateScreenshots is the environment variable that makes the suite
// rewrite the prompt screenshots in testdata/ (for the README).
const updateScreenshots = "FILLGATE_UPDATE_SCREENSHOT"

// The size of the prompt popup the extension opens (sw.js).
const popupWidth, popupHeight = 480, 660

// looksRight captures the prompt, still empty, in light and in dark mode.
// It checks that both are PNG images of the popup's size and that dark
// mode is darker, and writes them to testdata/prompt.png and
// testdata/prompt-dark.png when FILLGATE_UPDATE_SCREENSHOT=1.
func (p *cdpPrompt) looksRight(t testing.TB) {
	t.Helper()
	if !p.eval(`document.getElementById("value").value === ""`) {
		t.Fatalf("the prompt's field is not empty before the screenshot")
	}
	// Headless Chromium makes every window as large as --window-size, so
	// the popup's size (480x660, as the extension asks for) is emulated.
	if _, err := chromedp.Call(p.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: popupWidth, Height: popupHeight, DeviceScaleFactor: 1,
	}); err != nil {
		t.Fatalf("emulate the popup's size: %v", err)
	}
	light := p.capture("light")
	dark := p.capture("dark")
	p.capture("") // back to the browser's own preference
	if _, err := chromedp.Call(p.ctx, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
		t.Fatalf("clear the emulated size: %v", err)
	}

	li, ld := decodePNG(t, light, "light"), decodePNG(t, dark, "dark")
	for _, img := range []image.Image{li, ld} {
		b := img.Bounds()
		if b.Dx() != popupWidth || b.Dy() != popupHeight {
			t.Errorf("the prompt screenshot is %dx%d; want %dx%d", b.Dx(), b.Dy(), popupWidth, popupHeight)
		}
	}
	if luma(li, 2, 2) <= luma(ld, 2, 2) {
		t.Errorf("the dark-mode prompt is not darker than the light one")
	}
	if os.Getenv(updateScreenshots) != "1" {
		return
	}
	for name, data := range map[string][]byte{"prompt.png": light, "prompt-dark.png": dark} {
		path := filepath.Join("testdata", name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatalf("write %s: %v", path, err)
		}
		t.Logf("wrote %s", path)
	}
}

// capture takes a screenshot of the prompt with prefers-color-scheme set
// to scheme ("" clears the emulation).
func (p *cdpPrompt) capture(scheme string) []byte {
	p.t.Helper()
	var features []*emulation.MediaFeature
	if scheme != "" {
		features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
	}
	if _, err := chromedp.Call(p.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features}); err != nil {
		p.t.Fatalf("emulate %q colour scheme: %v", scheme, err)
	}
	if scheme == "" {
		return nil
	}
	data, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot of the prompt: %v", err)
	}
	return data
}

// eval evaluates a boolean expression in the prompt page.
func (p *cdpPrompt) eval(expr string) bool {
	p.t.Helper()
	ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](expr))
	if err != nil {
		p.t.Fatalf("evaluate %q in the prompt: %v", expr, err)
	}
	return ok
}

func decodePNG(t testing.TB, data []byte, name string) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the %s screenshot is not a PNG: %v", name, err)
	}
	return img
}

// luma is the brightness (0..65535) of img's pixel at (x, y).
func luma(img image.Image, x, y int) uint32 {
	r, g, b, _ := img.At(img.Bounds().Min.X+x, img.Bounds().Min.Y+y).RGBA()
	return (299*r + 587*g + 114*b) / 1000
}
