package accesslog

import (
	"strings"
	"testing"
)

// TestTier: each format reads the client's tier where the config says it
// is logged, and a line without it has no tier.
func TestTier(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		log  string
		want []string // tier of each good record
		keys []string
	}{
		{
			name: "combined, tier after the key",
			cfg:  Config{Key: Key{Kind: KeyHeader, Name: "X-API-Key"}, Extra: 1, TierExtra: 2},
			log: `1.2.3.4 - - [30/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1 "-" "ua" "k1" "paid"
1.2.3.4 - - [30/Nov/2026:10:00:01 +0000] "GET /a HTTP/1.1" 200 1 "-" "ua" "k2"
`,
			want: []string{"paid", ""},
			keys: []string{"k1", "k2"},
		},
		{
			name: "combined, keyed by ip, tier first extra",
			cfg:  Config{TierExtra: 1},
			log: `1.2.3.4 - - [30/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1 "-" "ua" "free"
5.6.7.8 - - [30/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1 "-" "ua"
`,
			want: []string{"free", ""},
			keys: []string{"1.2.3.4", "5.6.7.8"},
		},
		{
			name: "json",
			cfg:  Config{Format: JSON, Key: Key{Kind: KeyField, Name: "user"}, Fields: Fields{Tier: "plan"}},
			log: `{"time":"2026-11-30T10:00:00Z","user":"u1","plan":"gold","method":"GET","path":"/"}
{"time":"2026-11-30T10:00:01Z","user":"u2","method":"GET","path":"/"}
`,
			want: []string{"gold", ""},
			keys: []string{"u1", "u2"},
		},
		{
			name: "csv",
			cfg:  Config{Format: CSV, Fields: Fields{Tier: "tier"}},
			log:  "time,remote_addr,method,path,tier\n2026-11-30T10:00:00Z,9.9.9.9,GET,/,paid\n2026-11-30T10:00:00Z,8.8.8.8,GET,/,\n",
			want: []string{"paid", ""},
			keys: []string{"9.9.9.9", "8.8.8.8"},
		},
		{
			name: "no tier asked for",
			cfg:  Config{Format: CSV},
			log:  "time,remote_addr,method,path,tier\n2026-11-30T10:00:00Z,9.9.9.9,GET,/,paid\n",
			want: []string{""},
			keys: []string{"9.9.9.9"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd, err := NewReader(strings.NewReader(tt.log), tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var tiers, keys []string
			for rd.Scan() {
				tiers = append(tiers, string(rd.Record().Tier))
				keys = append(keys, string(rd.Record().Key))
			}
			if strings.Join(tiers, "|") != strings.Join(tt.want, "|") || strings.Join(keys, "|") != strings.Join(tt.keys, "|") {
				t.Errorf("tiers %q keys %q, want %q and %q (bad: %+v)", tiers, keys, tt.want, tt.keys, rd.Bad())
			}
		})
	}
	if _, err := NewReader(strings.NewReader(""), Config{TierExtra: 65}); err == nil || !strings.Contains(err.Error(), "tier extra 65") {
		t.Errorf("tier extra 65: %v", err)
	}
}
