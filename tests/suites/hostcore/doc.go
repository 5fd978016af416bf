// Package hostcore tests fillgate's host core end to end with fake ports
// and no browser (but the clean room's own headless one, which the host
// may start by itself under the person's default in a browser a program
// drives): the real host mode (host.Run in this process, and the
// built fillgate binary started as a native-messaging host) talking native
// messaging to tests/fakes/fakeext, the real agent socket, the real `fillgate
// fill` binary as the agent, and the real loopback prompt answered by
// tests/fakes/fakehuman.
//
// Every scenario uses a fresh random secret and scans every output, log,
// file and process command line and environment it produced for it
// (tests/kit/leakscan). The package holds only tests and benchmarks.
package hostcore
