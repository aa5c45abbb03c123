package factor

import (
	"fmt"
	"net/netip"
	"strings"
)

// NormalHost is a host name as a live run compares it: lower case,
// without surrounding spaces or the trailing dot of a fully qualified
// name ("www.example.com." is "www.example.com").
func NormalHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
}

// maxHostName and maxLabel bound a DNS name and each of its labels, in
// bytes (RFC 1035).
const (
	maxHostName = 253
	maxLabel    = 63
)

// CheckHostName refuses a host that is neither a DNS name (labels of
// letters, digits, '-' and '_', none empty or longer than 63 bytes, none
// starting or ending with '-') nor an IPv4 address: a browser's
// resolver rules and the certificate check see nothing else. An IPv6
// address is refused with the reason (the testbed carries IPv4 only).
func CheckHostName(host string) error {
	if addr, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if addr.Is4() {
			return nil
		}
		return fmt.Errorf("%s is an IPv6 address, and the testbed carries IPv4 only: give a host name, or an IPv4 address", addr)
	}
	if len(host) == 0 || len(host) > maxHostName {
		return fmt.Errorf("a host name is 1 to %d bytes", maxHostName)
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > maxLabel || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%.100q is not a DNS name (an empty, long or dashed label)", host)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%.100q is not a DNS name (a label holds %q: use letters, digits, '-' and '_')", host, c)
			}
		}
	}
	return nil
}
