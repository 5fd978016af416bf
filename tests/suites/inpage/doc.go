// Package inpage tests extension/inpage.js, the in-page check+insert
// function, and the extension that runs it, in real headless Chromium: the
// function through CDP isolated worlds (as the CDP fallback runs it) and the
// unpacked extension through its service worker.
package inpage
