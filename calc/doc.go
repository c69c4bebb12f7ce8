// Package calc turns measured capacity, client counts and per-client
// percentiles into rate-limit parameters for every algorithm in package
// algorithms: the sustained rate and burst, the window limit, GCRA's
// emission interval and tolerance, the leaky bucket's queue, Retry-After
// values, and the checks that warn when a design overcommits the service or
// multiplies across replicas. Each number comes with the reason for it.
//
// Everything here is pure functions grouped by topic per file: no HTTP, no
// templ, no wall clock. The web server, the JSON API and the command line
// all call the same functions.
package calc
