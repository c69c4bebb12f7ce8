package engine

import (
	"strings"
	"unsafe"

	"github.com/ratelab/ratelab/policy"
)

// routes finds the endpoint a request is to: the first, in policy order,
// whose method (ignoring ASCII case) and path template match it.
//
// A few endpoints are tried in turn, as the rule says. Past scanEndpoints
// a request would pay for every endpoint before the one it matches, or
// for all of them when it matches none (BenchmarkRoutes, 100 endpoints:
// about 360 ns, against 38 through the tree), so the templates are also
// kept in a tree of path segments: a request walks down its own path, a
// literal segment to the child of that name, any non-empty segment also
// to the {name} child, and among the templates its path reaches the
// first in policy order whose method matches wins. Each node knows the
// first endpoint below it, so a branch that cannot beat the best found
// so far is not walked. A request costs a step per node its path
// reaches: about one per segment for a REST API's templates, whatever
// their number, and at most one per node of the tree (routeMemo).
type routes struct {
	eps   []endpoint
	nodes []routeNode // nodes[0] is the root; nil while the endpoints are few
	memo  routeMemo   // set for the length of one Simulate
	walks int         // finds that walked the tree, for tests
}

// scanEndpoints is how many endpoints are tried in turn rather than
// through the tree: a few templates match faster than a walk down it.
const scanEndpoints = 8

// routeNode is a node of the template tree: the templates whose first
// segments lead to it.
type routeNode struct {
	// Children by literal segment: names[i] leads to kids[i], and byName
	// holds them too once they are many.
	names  []string
	kids   []int32
	byName map[string]int32
	wild   int32   // the child for a {name} segment; 0 for none (the root is no one's child)
	ends   []int32 // endpoints whose template ends here, in policy order
	first  int32   // the first endpoint, in policy order, at or below the node
}

// manyNames is how many literal children a node looks through in turn
// before it keeps them in a map.
const manyNames = 8

// newRoutes returns the routes of eps, whose path templates are
// templates.
func newRoutes(eps []endpoint, templates []string) routes {
	r := routes{eps: eps}
	if len(eps) > scanEndpoints {
		r.build(templates)
	}
	return r
}

// build makes the template tree.
func (r *routes) build(templates []string) {
	r.nodes = []routeNode{{first: int32(len(templates))}}
	for i, tp := range templates {
		n := int32(0)
		for _, seg := range strings.Split(strings.TrimPrefix(tp, "/"), "/") {
			n = r.child(n, seg, policy.IsPlaceholder(seg), int32(i))
		}
		r.nodes[n].ends = append(r.nodes[n].ends, int32(i))
	}
}

// child returns n's child for seg (a {name} when wild), making it for
// endpoint ep if there is none. Endpoints come in policy order, so the
// first to pass through a node is the first below it.
func (r *routes) child(n int32, seg string, wild bool, ep int32) int32 {
	nd := &r.nodes[n]
	if wild && nd.wild != 0 {
		return nd.wild
	}
	if !wild {
		if c := nd.named(seg); c != 0 {
			return c
		}
	}
	c := int32(len(r.nodes))
	if wild {
		nd.wild = c
	} else {
		nd.names, nd.kids = append(nd.names, seg), append(nd.kids, c)
		if len(nd.names) > manyNames {
			if nd.byName == nil {
				nd.byName = make(map[string]int32, 2*manyNames)
				for i, name := range nd.names {
					nd.byName[name] = nd.kids[i]
				}
			}
			nd.byName[seg] = c
		}
	}
	r.nodes = append(r.nodes, routeNode{first: ep})
	return c
}

// named is the child for the literal segment seg, 0 if none.
func (nd *routeNode) named(seg string) int32 {
	if nd.byName != nil {
		return nd.byName[seg]
	}
	for i, name := range nd.names {
		if name == seg {
			return nd.kids[i]
		}
	}
	return 0
}

// find returns the index of the endpoint the request is to, -1 for none.
// (Small enough to be inlined where a request is matched: the few
// endpoints of most policies are tried without a call more.)
func (r *routes) find(method, path string) int {
	if r.nodes != nil {
		return r.findTree(method, path)
	}
	for i := range r.eps {
		if r.eps[i].matches(method, path) {
			return i
		}
	}
	return -1
}

// findTree is find through the template tree.
func (r *routes) findTree(method, path string) int {
	if path == "" || path[0] != '/' {
		return -1 // every template starts with '/'
	}
	var key memoKey
	if r.memo != nil {
		key = memoKey{unsafe.StringData(method), unsafe.StringData(path), len(method), len(path)}
		if ep, ok := r.memo[key]; ok {
			return int(ep)
		}
	}
	r.walks++
	best := int32(len(r.eps))
	r.walk(0, path[1:], method, &best)
	ep := int(best)
	if ep == len(r.eps) {
		ep = -1
	}
	if r.memo != nil {
		if len(r.memo) == maxMemo {
			r.memo = nil // not a few strings: every request walks
		} else {
			r.memo[key] = int32(ep)
		}
	}
	return ep
}

// routeMemo remembers the endpoints of the requests of one Simulate by
// their method's and path's strings, known by their addresses and
// lengths: a simulation's requests are made from a few methods and paths
// (a pattern's mix, the designer's endpoints), each string shared by
// many requests, so their endpoints are found once. A walk costs a step
// per template node the path reaches, and a policy can have templates
// that every step of one path reaches without any matching (about 700
// nodes for 100 templates of 8 segments): 10 µs a request, 10 s for the
// API's million arrivals, where a step a segment takes a few
// nanoseconds. Requests that bring strings of their own (a million
// arrivals as sent) fill it at once: past maxMemo strings it is dropped.
// It is only safe where the strings' bytes cannot change while it is
// kept: Simulate's requests are the caller's for the call, where a
// replay's requests point into buffers that are reused.
type routeMemo map[memoKey]int32

// memoKey is a method and a path by their strings' addresses and lengths.
type memoKey struct {
	method, path *byte
	mlen, plen   int
}

// maxMemo is how many methods and paths a memo holds.
const maxMemo = 1024

// walk looks below node n for a template that matches the path's
// segments rest (after the ones that led to n), at least one, and
// lowers *best to the first whose method matches. It goes down one
// branch in a loop, and calls itself only where a segment leads both to
// a literal child and to a {name} one.
func (r *routes) walk(n int32, rest, method string, best *int32) {
	for {
		j := segmentEnd(rest)
		seg := rest[:j]
		nd := &r.nodes[n]
		a, b := nd.named(seg), int32(0)
		if seg != "" {
			b = nd.wild // a {name} matches a non-empty segment
		}
		// a is the branch that holds the earlier endpoint: what it
		// finds may spare b.
		if a == 0 || b != 0 && r.nodes[b].first < r.nodes[a].first {
			a, b = b, a
		}
		if a == 0 || r.nodes[a].first >= *best {
			return
		}
		if j == len(rest) {
			r.end(a, method, best)
			if b != 0 && r.nodes[b].first < *best {
				r.end(b, method, best)
			}
			return
		}
		rest = rest[j+1:]
		if b != 0 {
			r.walk(a, rest, method, best)
			if r.nodes[b].first >= *best {
				return
			}
			a = b
		}
		n = a
	}
}

// segmentEnd is the length of rest's first segment: the index of its
// first '/', or len(rest). A segment is short: a loop finds the end of
// the first 16 bytes sooner than a call of strings.IndexByte, which
// takes over past them.
func segmentEnd(rest string) int {
	for j := 0; j < len(rest) && j < 16; j++ {
		if rest[j] == '/' {
			return j
		}
	}
	if len(rest) <= 16 {
		return len(rest)
	}
	if j := strings.IndexByte(rest[16:], '/'); j >= 0 {
		return 16 + j
	}
	return len(rest)
}

// end lowers *best to the first template ending at node n whose method
// matches, if it is earlier.
func (r *routes) end(n int32, method string, best *int32) {
	for _, ep := range r.nodes[n].ends {
		if ep >= *best {
			return
		}
		if equalFoldUpper(method, r.eps[ep].method) {
			*best = ep
			return
		}
	}
}

// endpoint is one of the policy's endpoints, ready to match.
type endpoint struct {
	method string // upper case
	parts  []part // its path template
	cost   int64
	limit  int // index of its limit, -1 if none
}

// part is a piece of a path template: a run of literal text, slashes
// included, or a {name} segment, which matches one non-empty path segment.
type part struct {
	lit   string
	isVar bool
}

// template splits a path template (its leading '/' implied) into
// literal runs and {name} segments: "/v1/orders/{id}/items" is "/v1/orders/",
// {id}, "/items", so a match compares each run at once.
func template(path string) []part {
	var parts []part
	lit := "/"
	for i, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if i > 0 {
			lit += "/"
		}
		if !policy.IsPlaceholder(seg) {
			lit += seg
			continue
		}
		if lit != "" {
			parts = append(parts, part{lit: lit})
		}
		parts = append(parts, part{isVar: true})
		lit = ""
	}
	if lit != "" {
		parts = append(parts, part{lit: lit})
	}
	return parts
}

// matches reports whether a request's method and path match the endpoint,
// without allocating.
func (ep *endpoint) matches(method, path string) bool {
	if !equalFoldUpper(method, ep.method) {
		return false
	}
	for _, p := range ep.parts {
		if !p.isVar {
			if !strings.HasPrefix(path, p.lit) {
				return false
			}
			path = path[len(p.lit):]
			continue
		}
		// A segment is short: a loop finds its end sooner than a call
		// of strings.IndexByte.
		j := 0
		for j < len(path) && path[j] != '/' {
			j++
		}
		if j == 0 {
			return false
		}
		path = path[j:]
	}
	return path == ""
}

// equalFoldUpper reports whether s equals upper (already upper case),
// ignoring ASCII case.
func equalFoldUpper(s, upper string) bool {
	if len(s) != len(upper) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != upper[i] {
			return false
		}
	}
	return true
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}
