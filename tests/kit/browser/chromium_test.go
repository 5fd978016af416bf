package browser

import (
	"context"
	"testing"
	"time"
)

func TestStartChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := StartChromium(t, ctx, ChromiumOptions{})
	if c.WebSocketURL == "" || c.Port == 0 {
		t.Fatalf("no CDP endpoint")
	}
}
