package imports

import (
	"reflect"
	"testing"
)

// TestReaderForTellsRecordingsByName: directories are Mahimahi
// recordings, .har and .wprgo files (any case) HARs and WebPageReplay
// archives, any other file no recording.
func TestReaderForTellsRecordingsByName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dir   bool
		want  string
		isRec bool
	}{
		{"www.ny.gov.mahimahi", true, "Mahimahi", true},
		{"a.har", false, "HAR", true},
		{"A.HAR", false, "HAR", true},
		{"b.wprgo", false, "WPR", true},
		{"README.md", false, "", false},
		{"c.har.txt", false, "", false},
	} {
		read, ok := ReaderFor(tc.name, tc.dir)
		if ok != tc.isRec {
			t.Errorf("%s: recording %v, want %v", tc.name, ok, tc.isRec)
			continue
		}
		if ok && readerName(read) != tc.want {
			t.Errorf("%s: read by %s, want %s", tc.name, readerName(read), tc.want)
		}
	}
}

// readerName names one of the package's readers.
func readerName(r Reader) string {
	for name, known := range map[string]Reader{"Mahimahi": Mahimahi, "HAR": HAR, "WPR": WPR} {
		if reflect.ValueOf(known).Pointer() == reflect.ValueOf(r).Pointer() {
			return name
		}
	}
	return "another"
}
