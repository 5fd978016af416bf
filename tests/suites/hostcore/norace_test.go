//go:build !race

package hostcore

// raceEnabled is false: the tests run without the race detector.
const raceEnabled = false
