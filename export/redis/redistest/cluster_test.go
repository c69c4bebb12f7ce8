package redistest

import (
	"context"
	"os/exec"
	"testing"

	"github.com/ratelab/ratelab/internal/integration"
)

// TestStartCluster makes a cluster both ways (redis-cli, and CLUSTER
// ADDSLOTSRANGE + MEET) and checks that it serves keys from every master:
// keys with different hash tags land on all three, keys with one tag on
// one, and a write through the cluster client is read back on the master
// that owns the key's slot.
func TestStartCluster(t *testing.T) {
	cli, _ := exec.LookPath("redis-cli")
	tests := []struct {
		name, cli string
	}{
		{"redis-cli", cli},
		{"go-redis", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "redis-cli" && tt.cli == "" {
				if integration.Required() {
					t.Fatal("redis-cli not found, and integration tests are required; install Debian's redis-tools package")
				}
				t.Skip("skipping: redis-cli not found; install Debian's redis-tools package")
			}
			c := startCluster(t, tt.cli)
			if len(c.Addrs) != ClusterNodes {
				t.Fatalf("%d addresses, want %d", len(c.Addrs), ClusterNodes)
			}
			ctx := context.Background()
			rdb := ClusterClient(t, c)
			nodes := map[int]bool{}
			for _, k := range []string{"{a}", "{b}", "{c}", "{d}", "{e}", "{f}", "{g}", "{h}"} {
				n, err := c.Node(ctx, rdb, k)
				if err != nil {
					t.Fatal(err)
				}
				nodes[n] = true
				if err := rdb.Set(ctx, k, "v", 0).Err(); err != nil {
					t.Fatalf("SET %s: %v", k, err)
				}
				direct := Client(t, c.Addrs[n])
				if v, err := direct.Get(ctx, k).Result(); err != nil || v != "v" {
					t.Errorf("GET %s on %s: %q, %v; want \"v\"", k, c.Addrs[n], v, err)
				}
			}
			if len(nodes) != ClusterNodes {
				t.Errorf("8 hash tags landed on %d masters, want %d", len(nodes), ClusterNodes)
			}
			a, errA := c.Node(ctx, rdb, "x:{tag}:1")
			b, errB := c.Node(ctx, rdb, "y:{tag}:2")
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if a != b {
				t.Errorf("keys sharing the tag {tag} on masters %d and %d", a, b)
			}
		})
	}
}
