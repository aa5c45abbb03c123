// Package gen generates the pages quicbench serves when no recording is
// given, as site.Sites: synthetic pages of N images of a size over K
// origins (synthetic.go), the web2024 corpus of realistic pages drawn from
// the HTTP Archive's 2024 distributions (web2024.go, web2024page.go, and
// the corpus statistics in corpus.go), and the files of the parity
// benchmark (files.go). Every page is a pure function of its factor.Page
// and seed.
package gen
