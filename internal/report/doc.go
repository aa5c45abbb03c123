// Package report renders a run's analysis (package analysis): a terminal
// summary (text.go), a static HTML report (html.go, self-contained) with
// figures (figures.go, loads.go, filmstrip.go: gonum/plot, SVG and PNG,
// with tooltips) and tables (CSV), the answer in sentences (answer.go),
// and the paper's claims it is given (claims.go: package reproduce
// evaluates them). Build reads a run's results database and makes all of
// it; compare prints its summaries with the same writers.
package report
