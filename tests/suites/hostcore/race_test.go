//go:build race

package hostcore

// raceEnabled builds the fillgate binary with the race detector too when
// the tests run with it, so races in the host and the client show up.
const raceEnabled = true
