package measure

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// event is one generated request.
type event struct {
	at     time.Time
	ip     string
	key    string // the X-API-Key header; "-" for none
	method string
	path   string
}

// genEvents calls emit for n requests of a synthetic API, seeded: clients
// drawn from a skewed distribution (a few busy, many quiet), each with an
// API key, some bursts, times rising by a few milliseconds and jittered up
// to 2 s backwards (as nginx writes lines when requests end), and paths
// with ids.
func genEvents(n, clients int, seed uint64, emit func(e *event)) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ips := make([]string, clients)
	keys := make([]string, clients)
	for i := range ips {
		ips[i] = "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
		keys[i] = "key_" + strconv.FormatUint(rng.Uint64()>>20, 36)
	}
	zipf := rand.NewZipf(rng, 1.2, 4, uint64(clients-1))
	clock := time.Date(2024, 6, 1, 11, 59, 30, 0, time.UTC).UnixNano()
	var e event
	burst, burstClient := 0, 0
	for range n {
		clock += rng.Int64N(int64(4 * time.Millisecond))
		c := int(zipf.Uint64())
		if burst > 0 {
			c, burst = burstClient, burst-1
		} else if rng.IntN(2000) == 0 {
			burst, burstClient = 20+rng.IntN(200), c
		}
		e.at = time.Unix(0, clock-rng.Int64N(int64(2*time.Second))).UTC().Truncate(time.Second)
		e.ip, e.key = ips[c], keys[c]
		if c%50 == 49 {
			e.key = "-"
		}
		switch r := rng.IntN(10); {
		case r < 4:
			e.method, e.path = "GET", "/v1/orders/"+strconv.Itoa(rng.IntN(1e6))
		case r < 6:
			e.method, e.path = "POST", "/v1/orders"
		case r < 8:
			e.method, e.path = "GET", "/v1/search?q=item"+strconv.Itoa(rng.IntN(1000))+"&page=2"
		case r < 9:
			e.method, e.path = "GET", "/v1/users/6ba7b810-9dad-11d1-80b4-00c04fd4"+strconv.Itoa(1000+rng.IntN(9000))+"/keys"
		default:
			e.method, e.path = "DELETE", "/v1/orders/"+strconv.Itoa(rng.IntN(1e6))+"/items/"+strconv.Itoa(rng.IntN(20))
		}
		emit(&e)
	}
}

// appendCombined appends e as a combined line with the API key as the
// extra quoted field, its time in the zone z.
func appendCombined(b []byte, e *event, z *time.Location) []byte {
	b = append(b, e.ip...)
	b = append(b, " - - ["...)
	b = e.at.In(z).AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	b = append(b, "] \""...)
	b = append(b, e.method...)
	b = append(b, ' ')
	b = append(b, e.path...)
	b = append(b, ` HTTP/1.1" 200 1534 "https://app.example.com/dashboard" "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36" "`...)
	b = append(b, e.key...)
	return append(b, "\"\n"...)
}

// writeCombinedLog writes a generated log of n lines to a file in dir and
// returns its path and size.
func writeCombinedLog(tb testing.TB, dir string, n, clients int, seed uint64) (string, int64) {
	tb.Helper()
	path := filepath.Join(dir, "access.log")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	z := time.FixedZone("", 2*3600)
	var line []byte
	genEvents(n, clients, seed, func(e *event) {
		line = appendCombined(line[:0], e, z)
		w.Write(line)
	})
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path, fi.Size()
}
