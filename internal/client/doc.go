// Package client is what loads pages, behind one interface: Browser (a
// real browser, or the built-in loader), the Kind that declares which level
// of the client factor an implementation is and makes it, the Request a
// load is made of and the Result it gives, its verification (Verify), and
// what every browser shares: the visit driver (LoadIn, over the Tab each
// browser implements: first and measured visit, paint, frames, HAR,
// unknown hosts, failure texts), the warm pool (Pool), the scripts it
// runs in the page (metrics, paint timings, deterministic time and
// randomness), the frames of a visual load with their visual metrics, and
// its Executable (the flag naming its binary). Chromium (package chromium),
// Firefox (package firefox) and the built-in loader (package loader)
// implement it; package experiment keeps the list of kinds, one line each.
package client
