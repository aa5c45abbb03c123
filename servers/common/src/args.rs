//! The command line both servers take: the site (manifest and bodies), the
//! certificate and key, the congestion controller, the initial window, and
//! how many bound UDP sockets they inherit (descriptors 3 on).

use std::ffi::OsString;
use std::path::PathBuf;

/// The command line.
#[derive(Debug)]
pub struct Args {
    /// The manifest quicbench wrote.
    pub manifest: PathBuf,
    /// The directory of the bodies it names.
    pub bodies: PathBuf,
    /// The PEM certificate chain and key of every origin.
    pub cert: PathBuf,
    /// The PEM private key.
    pub key: PathBuf,
    /// The congestion controller, one of the server's names.
    pub cc: String,
    /// The initial congestion window, in packets.
    pub initial_window_packets: u64,
    /// How many sockets it inherits, at descriptors 3 to 3 + sockets - 1.
    pub sockets: i32,
}

/// Parses the arguments (without the program name) of server `name`, whose
/// controllers are `ccs` (the first the default). Paths are taken as the
/// operating system gives them (they need not be UTF-8); flags, the
/// controller and numbers must be text.
pub fn parse(
    name: &str,
    ccs: &[&str],
    args: impl IntoIterator<Item = OsString>,
) -> Result<Args, String> {
    let mut a = Args {
        manifest: PathBuf::new(),
        bodies: PathBuf::new(),
        cert: PathBuf::new(),
        key: PathBuf::new(),
        cc: ccs[0].into(),
        initial_window_packets: 32,
        sockets: 0,
    };
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        let flag = text(flag, "a flag")?;
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--manifest" => a.manifest = value.into(),
            "--bodies" => a.bodies = value.into(),
            "--cert" => a.cert = value.into(),
            "--key" => a.key = value.into(),
            "--cc" => a.cc = text(value, "--cc")?,
            "--initial-window" => {
                a.initial_window_packets = whole(&flag, &text(value, &flag)?, "packets")?
            }
            "--sockets" => a.sockets = whole(&flag, &text(value, &flag)?, "sockets")?,
            _ => return Err(format!("unknown flag {flag:?}")),
        }
    }
    if a.manifest.as_os_str().is_empty()
        || a.cert.as_os_str().is_empty()
        || a.key.as_os_str().is_empty()
        || a.sockets < 1
    {
        return Err(format!("usage: {name} --manifest FILE --bodies DIR --cert PEM --key PEM --sockets N [--cc {}] [--initial-window PACKETS]", ccs.join("|")));
    }
    if !ccs.contains(&a.cc.as_str()) {
        return Err(format!(
            "--cc {:?} is unknown: use {}",
            a.cc,
            ccs.join(", ")
        ));
    }
    if !(1..=1000).contains(&a.initial_window_packets) {
        return Err(format!(
            "--initial-window {} is outside 1 to 1000 packets",
            a.initial_window_packets
        ));
    }
    Ok(a)
}

/// An argument that must be text (`what` names it in the error).
fn text(arg: OsString, what: &str) -> Result<String, String> {
    arg.into_string()
        .map_err(|a| format!("{what} {a:?} is not UTF-8 text"))
}

/// A flag's value as a whole number of `what`.
fn whole<T: std::str::FromStr>(flag: &str, value: &str, what: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag} {value:?} is not a whole number of {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    const BASE: &str = "--manifest m --bodies b --cert c --key k --sockets 2";

    #[test]
    fn defaults_and_values() {
        let a = parse("s", &["cubic", "reno"], args(BASE)).unwrap();
        assert_eq!(
            (a.cc.as_str(), a.initial_window_packets, a.sockets),
            ("cubic", 32, 2)
        );
        let a = parse(
            "s",
            &["cubic", "reno"],
            args(&format!("{BASE} --cc reno --initial-window 10")),
        )
        .unwrap();
        assert_eq!((a.cc.as_str(), a.initial_window_packets), ("reno", 10));
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        for (line, want) in [
            ("--manifest m", "usage: s "),
            (
                &format!("{BASE} --cc bbr"),
                "--cc \"bbr\" is unknown: use cubic, reno",
            ),
            (&format!("{BASE} --initial-window 0"), "outside 1 to 1000"),
            (
                &format!("{BASE} --initial-window x"),
                "not a whole number of packets",
            ),
            (&format!("{BASE} --color red"), "unknown flag \"--color\""),
            (&format!("{BASE} --cc"), "--cc needs a value"),
        ] {
            let err = parse("s", &["cubic", "reno"], args(line)).unwrap_err();
            assert!(err.contains(want), "{line}: {err}");
        }
    }

    /// Paths that are not UTF-8 (a run directory's name can be any bytes)
    /// are taken as they are; a controller that is not text is an error.
    #[test]
    fn paths_need_not_be_utf8() {
        use std::os::unix::ffi::OsStringExt;
        let odd = OsString::from_vec(b"/runs/\xff\xfe/site.json".to_vec());
        let mut line = args(BASE);
        line[1] = odd.clone();
        let a = parse("s", &["cubic"], line).unwrap();
        assert_eq!(a.manifest.as_os_str(), odd.as_os_str());
        let mut line = args(&format!("{BASE} --cc x"));
        *line.last_mut().unwrap() = OsString::from_vec(vec![0xff]);
        let err = parse("s", &["cubic"], line).unwrap_err();
        assert!(err.contains("--cc") && err.contains("not UTF-8"), "{err}");
    }
}
