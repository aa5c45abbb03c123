package report

import "strings"

// Claims are a paper's claims evaluated on a run's loads and on those of
// its reproduction's other runs, as the report shows them. Package
// reproduce evaluates them and hands them over in Options.Claims: the
// report renders, it neither evaluates nor reads other runs.
type Claims struct {
	// PaperID, Cite, Title, Venue and Setup describe the paper: its ID
	// for quicbench reproduce, "Cook et al. 2017", its title, where it
	// appeared ("" if unknown) and its set-up in a line.
	PaperID, Cite, Title, Venue, Setup string
	Rows                               []ClaimRow
	// Tally counts the verdicts, such as "5 agree, 1 inconclusive".
	Tally string
	// Table is the claims as the terminal shows them.
	Table string
	// CSV is claims.csv, its header first.
	CSV [][]string
	// Gaps are the paper's conditions no claim can test here.
	Gaps []ClaimGap
	// Runs names the runs read ("" for this one: its trial IDs carry no
	// run), and Missing the reproduction's runs not found beside it.
	Runs    []string
	Missing []string
}

// ClaimRow is one claim and its verdict, each field as the report prints
// it.
type ClaimRow struct {
	// ID, Text, Reported (the paper's words on its result), Figure (the
	// paper's number) and Source (where in the paper) are the claim's.
	ID, Text, Reported, Figure, Source string
	// Verdict is agrees, disagrees, inconclusive, not measured or not
	// reproduced; Level notes the interval it read when the paper's level
	// is not 5 %.
	Verdict, Level string
	// ToDecide says what an inconclusive claim lacks to be decided.
	ToDecide string
	// Statistic names our statistic, Ours is its value and its interval at
	// the paper's level (the verdict's),
	// HoldsIf the region where the claim holds ("" for a claim not
	// reproduced).
	Statistic, Ours, HoldsIf string
	// Used says how many settings and loads it used, Covers which
	// networks and pages.
	Used, Covers string
	// Differs says what differs from the paper's set-up, or why the claim
	// is not reproduced.
	Differs string
	// Arithmetic, if set, says the paper reasons the claim from the
	// protocols' design, and what that predicts for today's protocols.
	Arithmetic string
	// Trials are the IDs of the loads used, "run/id" for another run's.
	Trials []string
	// Real is what a claim about pages found on recorded sites: verdict,
	// value, sites used and left out; "" when it was not evaluated there.
	Real string
	// Marks say what a result like the paper's needs that a
	// reproduction may lack (papers.Claim.Marks): paper scale, more than
	// the paper's design, more recorded sites.
	Marks []string
	// Why sets the paper's reason for the claim beside its loads taken
	// apart; "" for a claim without one.
	Why string
}

// ClaimGap is a condition of the paper no claim can test here, and why.
type ClaimGap struct{ Condition, Reason string }

// ClaimsReadFrom says which runs the claims read: "read from this run and
// cook2017-servers-quick beside it", and the runs not found.
func ClaimsReadFrom(cl *Claims) string {
	text := "read from this run"
	if others := cl.Runs[1:]; len(others) > 0 {
		text += " and " + strings.Join(others, ", ") + " beside it"
	}
	if len(cl.Missing) > 0 {
		text += "; not found beside it: " + strings.Join(cl.Missing, ", ") + " (quicbench reproduce " + cl.PaperID + " runs them)"
	}
	return text
}
