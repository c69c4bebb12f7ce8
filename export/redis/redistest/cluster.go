package redistest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelab/ratelab/internal/integration"
)

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// ClusterNodes is how many masters StartCluster runs.
const ClusterNodes = 3

// Cluster is a Redis Cluster of ClusterNodes masters on loopback, without
// replicas or persistence, started by StartCluster.
type Cluster struct {
	// Addrs are the masters' client addresses (127.0.0.1:port).
	Addrs []string
}

// slotRanges are the slots each master takes when the cluster is made
// without redis-cli, [first, last] inclusive: the split redis-cli
// --cluster create makes for three masters.
var slotRanges = [ClusterNodes][2]int{{0, 5460}, {5461, 10922}, {10923, Slots - 1}}

// StartCluster runs ClusterNodes redis-server masters in cluster mode on
// free loopback ports (each with its own temporary directory and cluster
// config file, no persistence), joins them into one cluster with
// redis-cli --cluster create when redis-cli is installed, else with
// CLUSTER ADDSLOTSRANGE and CLUSTER MEET, and returns once every node
// reports cluster_state:ok and knows every other. The servers are stopped
// when the test ends. Without redis-server the test skips (or fails when
// integration tests are required).
func StartCluster(t testing.TB) Cluster {
	t.Helper()
	cli, _ := exec.LookPath("redis-cli")
	return startCluster(t, cli)
}

// startCluster is StartCluster, creating the cluster with the redis-cli
// at path cli, or through go-redis when cli is "".
func startCluster(t testing.TB, cli string) Cluster {
	t.Helper()
	bin := integration.Need(t, "redis-server", "redis-server")
	c := Cluster{}
	buses := make([]int, ClusterNodes)
	for i := range ClusterNodes {
		c.Addrs = append(c.Addrs, "")
		c.Addrs[i], buses[i] = startNode(t, bin)
	}
	// Creating and settling the cluster is setup: allow a loaded machine
	// 60 s for all of it.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if cli != "" {
		args := append([]string{"--cluster", "create"}, c.Addrs...)
		args = append(args, "--cluster-replicas", "0", "--cluster-yes")
		out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
		}
	} else if err := join(ctx, c.Addrs, buses); err != nil {
		t.Fatalf("creating the cluster: %v", err)
	}
	if err := settle(ctx, c.Addrs); err != nil {
		t.Fatalf("the cluster did not settle: %v", err)
	}
	return c
}

// startNode starts one cluster-mode redis-server on a free client port and
// a free cluster bus port, trying three pairs, and returns its address and
// bus port. It is stopped when the test ends.
func startNode(t testing.TB, bin string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, bus := integration.FreePort(t), integration.FreePort(t)
		if port == bus {
			continue
		}
		var out bytes.Buffer
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf"),
			"--cluster-node-timeout", "5000",
			"--save", "", "--appendonly", "no", "--dir", dir)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			_ = cmd.Process.Kill()
			<-exited
		}
		addr := integration.Addr(port)
		lastErr = waitPing(addr, exited)
		if lastErr == nil {
			t.Cleanup(stop)
			return addr, bus
		}
		stop()
		// A failed attempt's config file would make the next server on
		// this directory a different node; start it afresh.
		_ = os.Remove(filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf"))
		t.Logf("cluster redis-server on port %d did not start (%v): %s", port, lastErr, out.String())
	}
	t.Fatalf("cluster redis-server did not start: %v", lastErr)
	return "", 0
}

// waitPing waits up to 30 s for the server at addr to answer PING, or for
// it to exit.
func waitPing(addr string, exited chan error) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case err := <-exited:
			exited <- err // for stop
			return fmt.Errorf("redis-server exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// join makes one cluster of the nodes at addrs (bus ports buses) without
// redis-cli: each node takes its slotRanges entry, then the first meets
// the others.
func join(ctx context.Context, addrs []string, buses []int) error {
	for i, addr := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		err := rdb.ClusterAddSlotsRange(ctx, slotRanges[i][0], slotRanges[i][1]).Err()
		if err == nil && i > 0 {
			first := redis.NewClient(&redis.Options{Addr: addrs[0]})
			host, port, _ := strings.Cut(addr, ":")
			// CLUSTER MEET ip port bus-port: the bus port is not port+10000.
			err = first.Do(ctx, "cluster", "meet", host, port, strconv.Itoa(buses[i])).Err()
			first.Close()
		}
		rdb.Close()
		if err != nil {
			return fmt.Errorf("node %s: %w", addr, err)
		}
	}
	return nil
}

// settle waits, until ctx ends, for every node to report cluster_state:ok,
// all slots assigned and every node known, polling every 100 ms.
func settle(ctx context.Context, addrs []string) error {
	want := []string{"cluster_state:ok", "cluster_slots_assigned:" + strconv.Itoa(Slots),
		"cluster_slots_ok:" + strconv.Itoa(Slots), "cluster_known_nodes:" + strconv.Itoa(len(addrs))}
	clients := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		clients[i] = redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1})
		defer clients[i].Close()
	}
	last := ""
	for {
		ok := true
		for i, c := range clients {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil {
				ok, last = false, fmt.Sprintf("%s: %v", addrs[i], err)
				break
			}
			for _, w := range want {
				if !strings.Contains(info, w+"\r\n") {
					ok, last = false, fmt.Sprintf("%s has no %s:\n%s", addrs[i], w, info)
					break
				}
			}
			if !ok {
				break
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %s", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ClusterClient is a go-redis cluster client of c, closed when the test
// ends.
func ClusterClient(t testing.TB, c Cluster) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// Node is the index in c.Addrs of the master that serves key's slot, as
// the cluster itself reports it (CLUSTER KEYSLOT, CLUSTER SLOTS).
func (c Cluster) Node(ctx context.Context, rdb redis.UniversalClient, key string) (int, error) {
	slot, err := rdb.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return -1, err
	}
	slots, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		return -1, err
	}
	for _, s := range slots {
		if int64(s.Start) <= slot && slot <= int64(s.End) && len(s.Nodes) > 0 {
			for i, a := range c.Addrs {
				if s.Nodes[0].Addr == a {
					return i, nil
				}
			}
			return -1, fmt.Errorf("slot %d of %q is served by %s, not one of %v", slot, key, s.Nodes[0].Addr, c.Addrs)
		}
	}
	return -1, fmt.Errorf("slot %d of %q is served by no node", slot, key)
}
