package firefox

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quicbench/quicbench/internal/client"
	"github.com/quicbench/quicbench/internal/factor"
	"github.com/quicbench/quicbench/internal/safefs"

	"github.com/quicbench/quicbench/internal/trust"
)

// basePrefs are every profile's preferences: nothing that connects,
// resolves or fetches ahead of the page (the handshakes must be the
// page's), no service of Firefox's own that talks to the network or uses
// the CPU in the background, and timers at full precision.
func basePrefs() map[string]any {
	return map[string]any{
		// Nothing ahead of the page: speculative connections, prefetching,
		// DNS prefetching, the network predictor.
		"network.http.speculative-parallel-limit":   0,
		"network.predictor.enabled":                 false,
		"network.prefetch-next":                     false,
		"network.dns.disablePrefetch":               true,
		"network.dns.disablePrefetchFromHTTPS":      true,
		"browser.urlbar.speculativeConnect.enabled": false,
		"browser.places.speculativeConnect.enabled": false,
		// Names come from the profile's own hosts file only: no DNS over
		// HTTPS, no HTTPS records (which could turn h2 into h3), no ECH.
		"network.trr.mode":                    5,
		"network.dns.native_https_query":      false,
		"network.dns.use_https_rr_as_altsvc":  false,
		"network.dns.echconfig.enabled":       false,
		"network.dns.http3_echconfig.enabled": false,
		// No reset of open connections when Firefox's link service reports
		// a change of the network: soon after start it reports one (three
		// "network:link-status-changed" in every load's HTTP log here), and
		// Firefox then stops reusing the QUIC connection that just fetched
		// the document, closes it (H3_NO_ERROR) and opens another: a second
		// handshake inside the load, in 9 of 10 h3 loads on an LTE link.
		"network.http.move_to_pending_list_after_network_change": false,
		// Firefox's own traffic and background work.
		"network.captive-portal-service.enabled":     false,
		"network.connectivity-service.enabled":       false,
		"services.settings.server":                   "data:,#remote-settings-dummy/v1",
		"app.normandy.enabled":                       false,
		"app.update.disabledForTesting":              true,
		"toolkit.telemetry.enabled":                  false,
		"datareporting.healthreport.uploadEnabled":   false,
		"datareporting.policy.dataSubmissionEnabled": false,
		"browser.safebrowsing.malware.enabled":       false,
		"browser.safebrowsing.phishing.enabled":      false,
		"browser.safebrowsing.downloads.enabled":     false,
		"browser.safebrowsing.blockedURIs.enabled":   false,
		"extensions.update.enabled":                  false,
		"extensions.getAddons.cache.enabled":         false,
		"browser.newtabpage.enabled":                 false,
		"browser.startup.page":                       0,
		"browser.startup.homepage_override.mstone":   "ignore",
		"browser.aboutwelcome.enabled":               false,
		"browser.shell.checkDefaultBrowser":          false,
		"browser.sessionstore.resume_from_crash":     false,
		"browser.pagethumbnails.capturing_disabled":  true,
		"media.gmp-manager.updateEnabled":            false,
		"dom.push.connection.enabled":                false,
		// Timings at full precision (Firefox rounds them to 1 ms by default).
		"privacy.reduceTimerPrecision": false,
		// Trust the run's certificate authority for HTTP/3 as for TCP.
		"network.http.http3.disable_when_third_party_roots_found": false,
	}
}

// protocolPrefs are the preferences that make every request of a load use
// protocol p: HTTP/3 forced on port 443 of every host (no Alt-Svc needed)
// with no TCP connection raced against it (Firefox opens one when QUIC's
// handshake takes 100 ms, as Chromium with forced QUIC never does), or
// HTTP/3 off, or HTTP/3 and HTTP/2 off.
func protocolPrefs(p factor.Protocol, hosts []string) map[string]any {
	switch p {
	case factor.H3:
		var mapping []string
		for _, h := range hosts {
			mapping = append(mapping, h+";h3=:443")
		}
		return map[string]any{
			"network.http.http3.enable":                                true,
			"network.http.http3.alt-svc-mapping-for-testing":           strings.Join(mapping, ","),
			"network.http.http3.force-use-alt-svc-mapping-for-testing": true,
			"network.http.http3.backup_timer_delay":                    noBackupConnectionMs,
		}
	case factor.H2:
		return map[string]any{"network.http.http3.enable": false}
	default:
		return map[string]any{"network.http.http3.enable": false, "network.http.http2.enabled": false}
	}
}

// discoveryPrefs are the preferences of protocol p under a discovery rule:
// HTTP/3 on and nothing forced, for every protocol alike, so that the
// loads differ only in what the servers offer (Alt-Svc for h3), and
// Firefox races TCP against a slow QUIC handshake as it does by default;
// HTTP/2 off where the servers speak h1 over TCP (!http2).
//
// Under https-rr Firefox also asks the system's resolver for HTTPS records
// and takes their alpn as an alternative service (DNS over HTTPS stays
// off: the testbed's resolver is asked over plain DNS).
func discoveryPrefs(http2 bool, d factor.Discovery) map[string]any {
	prefs := map[string]any{"network.http.http3.enable": true}
	if !http2 {
		prefs["network.http.http2.enabled"] = false
	}
	if d == factor.DiscoveryHTTPSRR {
		prefs["network.dns.native_https_query"] = true
		prefs["network.dns.use_https_rr_as_altsvc"] = true
	}
	return prefs
}

// noBackupConnectionMs is how long Firefox waits for a QUIC handshake
// before it races a TCP connection against it: an hour, longer than any
// load.
const noBackupConnectionMs = 3_600_000

// userJS renders prefs as a user.js file, one user_pref line per
// preference in the order of their names.
func userJS(prefs map[string]any) ([]byte, error) {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(prefs)) {
		var value string
		switch v := prefs[name].(type) {
		case bool:
			value = strconv.FormatBool(v)
		case int:
			value = strconv.Itoa(v)
		case string:
			value = strconv.Quote(v)
		default:
			return nil, fmt.Errorf("firefox: preference %s has a value of type %T", name, v)
		}
		fmt.Fprintf(&b, "user_pref(%s, %s);\n", strconv.Quote(name), value)
	}
	return []byte(b.String()), nil
}

// hostsFile is the /etc/hosts the browser sees: localhost and each host
// of addrs at its address, in the order of the names.
func hostsFile(addrs map[string]netip.Addr) []byte {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost\n")
	for _, host := range slices.Sorted(maps.Keys(addrs)) {
		fmt.Fprintf(&b, "%s\t%s\n", addrs[host], host)
	}
	return []byte(b.String())
}

// maxCAFileBytes bounds the certificate authority file read into a
// profile.
const maxCAFileBytes = 1 << 20

// prefsFor is the user.js of req's profile: the base preferences and
// req's protocol's or discovery's.
func prefsFor(req client.Request) ([]byte, error) {
	prefs := basePrefs()
	protocol := protocolPrefs(req.Protocol, req.Hosts)
	if req.Discovery.Discovers() {
		protocol = discoveryPrefs(req.SpeaksHTTP2(), req.Discovery)
	}
	for k, v := range protocol {
		prefs[k] = v
	}
	return userJS(prefs)
}

// makeCertDB makes an empty NSS database in dir and, with caFile, has it
// trust that certificate authority for TLS servers (addCA).
func makeCertDB(ctx context.Context, dir, caFile string) error {
	if err := certutil(ctx, "-N", "-d", "sql:"+dir, "--empty-password"); err != nil {
		return err
	}
	return addCA(ctx, dir, caFile)
}

// addCA has the NSS database in dir trust the certificate authority in
// caFile for TLS servers; "" adds none. caFile (a user's --ca among them)
// is read once, through a descriptor that never blocks on a FIFO, and
// certutil is handed a private copy in dir: never a path someone else
// could change under it.
func addCA(ctx context.Context, dir, caFile string) error {
	if caFile == "" {
		return nil
	}
	pem, err := safefs.ReadRegular(caFile, maxCAFileBytes)
	if err != nil {
		return fmt.Errorf("firefox: certificate authority: %w", err)
	}
	private := filepath.Join(dir, "ca-import.pem")
	if err := safefs.WriteFile(dir, "ca-import.pem", pem, 0o600); err != nil {
		return fmt.Errorf("firefox: certificate authority: %w", err)
	}
	defer os.Remove(private)
	return certutil(ctx, "-A", "-d", "sql:"+dir, "-n", "quicbench run CA", "-t", "C,,", "-i", private)
}

// certutil runs NSS's certutil with args; it ends with ctx.
func certutil(ctx context.Context, args ...string) error {
	path, err := trust.LookPath("certutil")
	if err != nil {
		return fmt.Errorf("firefox: certutil is missing: install it with 'make firefox' (apt-get install libnss3-tools)")
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("firefox: certutil %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

// writeProfile writes what a profile holds for req: its preferences
// (user.js), its hosts file and a temporary directory.
func writeProfile(profile string, req client.Request) error {
	js, err := prefsFor(req)
	if err == nil {
		err = os.WriteFile(filepath.Join(profile, "user.js"), js, 0o600)
	}
	if err == nil && req.DNS.Resolves() {
		_, err = client.ResolverFiles(profile, req.Resolver)
	} else if err == nil {
		err = os.WriteFile(filepath.Join(profile, "hosts"), hostsFile(req.Addrs), 0o644)
	}
	if err == nil {
		err = os.Mkdir(filepath.Join(profile, "tmp"), 0o700)
	}
	return err
}

// etcBinds are the files of profile the browser sees under /etc: its
// hosts file, and where it resolves (client.ResolverFiles wrote them)
// its resolv.conf and nsswitch.conf.
func etcBinds(profile string) map[string]string {
	binds := map[string]string{"/etc/hosts": filepath.Join(profile, "hosts")}
	if _, err := os.Lstat(filepath.Join(profile, "resolv.conf")); err == nil {
		binds["/etc/resolv.conf"] = filepath.Join(profile, "resolv.conf")
		binds["/etc/nsswitch.conf"] = filepath.Join(profile, "nsswitch.conf")
	}
	return binds
}

// newProfile makes a fresh profile directory for req: the template's
// files (the run's CA trusted, Firefox's own start-up caches), req's
// preferences and hosts file, and a temporary directory.
func (f *Firefox) newProfile(ctx context.Context, req client.Request) (string, error) {
	template, err := f.templateFor(ctx, req)
	if err != nil {
		return "", err
	}
	profile, err := os.MkdirTemp(f.ProfileDir, "profile-")
	if err != nil {
		return "", fmt.Errorf("firefox: profile directory: %w", err)
	}
	err = copyEntries(template, profile, templateEntries())
	if err == nil {
		err = writeProfile(profile, req)
	}
	if err != nil {
		os.RemoveAll(profile)
		return "", fmt.Errorf("firefox: profile: %w", err)
	}
	return profile, nil
}
