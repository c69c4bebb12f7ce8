package main

import (
	"container/list"
	"sync"
)

// defaultPageCache bounds the cache of rendered designs: 64 MiB holds a
// few thousand embeds (an SVG is 20–60 KB) or a few hundred designer
// pages.
const defaultPageCache = 64 << 20

// pageEntryOverhead is what an entry costs beyond its key and body: the
// list element, the map slot and the header fields, roughly.
const pageEntryOverhead = 256

// rendered is one cached render: the body and its media type, and the
// header a designer page for htmx adds (HX-Push-Url), if any.
type rendered struct {
	contentType string
	body        []byte
	pushURL     string
}

func (r rendered) size(key string) int64 {
	return int64(len(key)+len(r.body)+len(r.pushURL)+len(r.contentType)) + pageEntryOverhead
}

// pageCache keeps deterministic renders (embeds, SVGs, designer pages) by
// their canonical request, least recently used first out, within a bound
// on bytes: an embed in popular documentation is the same URL thousands of
// times, and its render costs most of a CPU-second. An entry larger than
// an eighth of the bound is not kept, so one design cannot empty the
// cache. A nil *pageCache keeps nothing. Safe for concurrent use.
type pageCache struct {
	max int64

	mu      sync.Mutex
	size    int64
	order   *list.List // of *pageEntry, most recently used first
	entries map[string]*list.Element
	hits    uint64
	misses  uint64
}

type pageEntry struct {
	key string
	r   rendered
}

// newPageCache returns a cache of at most max bytes; 0 means
// defaultPageCache, and a negative max returns nil (no cache).
func newPageCache(max int64) *pageCache {
	switch {
	case max < 0:
		return nil
	case max == 0:
		max = defaultPageCache
	}
	return &pageCache{max: max, order: list.New(), entries: map[string]*list.Element{}}
}

// get returns the render of key and marks it recently used.
func (pc *pageCache) get(key string) (rendered, bool) {
	if pc == nil {
		return rendered{}, false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	el, ok := pc.entries[key]
	if !ok {
		pc.misses++
		return rendered{}, false
	}
	pc.hits++
	pc.order.MoveToFront(el)
	return el.Value.(*pageEntry).r, true
}

// put keeps r under key, dropping the least recently used entries until
// the cache is within its bound. The caller must not change r.body after.
func (pc *pageCache) put(key string, r rendered) {
	if pc == nil {
		return
	}
	n := r.size(key)
	if n > pc.max/8 {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if el, ok := pc.entries[key]; ok {
		e := el.Value.(*pageEntry)
		pc.size += n - e.r.size(key)
		e.r = r
		pc.order.MoveToFront(el)
	} else {
		pc.entries[key] = pc.order.PushFront(&pageEntry{key: key, r: r})
		pc.size += n
	}
	for pc.size > pc.max {
		el := pc.order.Back()
		e := el.Value.(*pageEntry)
		pc.order.Remove(el)
		delete(pc.entries, e.key)
		pc.size -= e.r.size(e.key)
	}
}

// stats returns the entries, their bytes, and the hits and misses so far.
func (pc *pageCache) stats() (entries int, bytes int64, hits, misses uint64) {
	if pc == nil {
		return 0, 0, 0, 0
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return len(pc.entries), pc.size, pc.hits, pc.misses
}
