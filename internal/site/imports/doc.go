// Package imports reads recordings of real pages made by other tools into
// site.Archives: HAR files (harimport.go), WebPageReplay archives (wpr.go,
// through the streaming JSON reader of jsonstream.go) and Mahimahi
// recording directories (mahimahi.go). Each import is bounded, never
// follows a link into the user's files, and says what it kept and left
// out in a Report (import.go); Options choose the http:// upgrade
// (upgrade.go). A Recording builds an archive from responses a browser
// hands over (chromium's record).
package imports
