// Command bench-pipeline runs the pipeline benchmarks of benchmarks/compare.py with franz-go:
// a producer writes -n records to topic 0, then three consumer groups each consume one topic
// and produce the next (topic 0 -> 1 -> 2 -> 3), and a reader checks that topic 3 holds every
// record exactly once. Each group starts with one member; its other members join while data
// flows (when the group has forwarded an even share of the records), so every group
// rebalances under load with the balancer given.
//
//	bench-pipeline -bootstrap 127.0.0.1:9092 -n 500000 -mode group -balancer cooperative
//	bench-pipeline -bootstrap 127.0.0.1:9092 -n 500000 -mode txn
//
// -mode group: each stage polls with rebalances blocked, produces the batch, commits its
// offsets and only then allows a rebalance (no duplicates without faults). -mode txn:
// consume-transform-produce in transactions (GroupTransactSession, read_committed, offsets
// committed in the transaction), the reader reads read_committed.
//
// It prints one JSON line ({"seconds": ...}: producer start to the last record read at the
// end) and exits 0, or prints why on stderr and exits 1. Every wait has the -timeout deadline.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestStats counts, per API, the requests every client of the run sent and the time each
// waited for its answer (from the request's write to the end of reading its answer), with
// -requests: what the broker was asked to do and what the clients waited for.
type requestStats struct {
	mu    sync.Mutex
	count map[int16]int64
	wait  map[int16]time.Duration
}

func (s *requestStats) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if e2e.Err() != nil {
		return
	}
	s.mu.Lock()
	s.count[key]++
	s.wait[key] += e2e.DurationE2E()
	s.mu.Unlock()
}

func (s *requestStats) summary() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{}
	for key, n := range s.count {
		out[kmsg.NameForKey(key)] = map[string]any{
			"requests": n, "wait_ms": float64(s.wait[key].Microseconds()) / 1000,
		}
	}
	return out
}

var stats *requestStats

// hooks is what every client of the run is created with: the request accounting, when asked.
func hooks() []kgo.Opt {
	if stats == nil {
		return nil
	}
	return []kgo.Opt{kgo.WithHooks(stats)}
}

type config struct {
	boot       []string
	n          int
	partitions int
	rf         int
	mode       string
	balancer   string
	members    int
	maxPoll    int
	prefix     string
	timeout    time.Duration
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-pipeline: "+format+"\n", args...)
	os.Exit(1)
}

func (c *config) topic(i int) string { return fmt.Sprintf("%s-t%d", c.prefix, i) }

func createTopics(ctx context.Context, c *config) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.boot...))
	if err != nil {
		fail("client: %v", err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30_000
	for i := 0; i < 4; i++ {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic = c.topic(i)
		t.NumPartitions = int32(c.partitions)
		t.ReplicationFactor = int16(c.rf)
		req.Topics = append(req.Topics, t)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		fail("CreateTopics: %v", err)
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			fail("CreateTopics %s: %v", t.Topic, err)
		}
	}
}

func groupOpts(c *config) []kgo.Opt {
	switch c.balancer {
	case "eager":
		return []kgo.Opt{kgo.Balancers(kgo.RangeBalancer())}
	case "cooperative":
		return []kgo.Opt{kgo.Balancers(kgo.CooperativeStickyBalancer())}
	case "consumer": // KIP-848: the coordinator assigns
		return []kgo.Opt{kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer()}
	}
	fail("unknown -balancer %q (eager, cooperative, consumer)", c.balancer)
	return nil
}

func quiet(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, kgo.ErrClientClosed)
}

func copyRecords(recs []*kgo.Record) []*kgo.Record {
	out := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		out[i] = &kgo.Record{Key: r.Key, Value: r.Value}
	}
	return out
}

// stage runs one member of group `stage` until stop is set; forwarded counts the records it
// produced downstream whose offsets were committed.
func stage(ctx context.Context, c *config, st int, stop *atomic.Bool, forwarded *atomic.Int64, warn func(string, ...any)) {
	in, out, group := c.topic(st), c.topic(st+1), fmt.Sprintf("%s-g%d", c.prefix, st+1)
	base := []kgo.Opt{
		kgo.SeedBrokers(c.boot...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(in),
		kgo.DefaultProduceTopic(out),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	base = append(base, hooks()...)
	poll := func(p interface {
		PollRecords(context.Context, int) kgo.Fetches
	}) []*kgo.Record {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		fetches := p.PollRecords(pctx, c.maxPoll)
		fetches.EachError(func(t string, p int32, err error) {
			if !quiet(err) {
				warn("stage %d fetch %s[%d]: %v", st+1, t, p, err)
			}
		})
		return fetches.Records()
	}
	if c.mode == "txn" {
		s, err := kgo.NewGroupTransactSession(append(base,
			kgo.TransactionalID(fmt.Sprintf("%s-g%d-%d", c.prefix, st+1, time.Now().UnixNano())),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.RequireStableFetchOffsets(),
		)...)
		if err != nil {
			fail("session: %v", err)
		}
		defer s.Close()
		for !stop.Load() && ctx.Err() == nil {
			recs := poll(s)
			if len(recs) == 0 {
				continue
			}
			if err := s.Begin(); err != nil {
				fail("stage %d begin: %v", st+1, err)
			}
			if err := s.ProduceSync(ctx, copyRecords(recs)...).FirstErr(); err != nil {
				warn("stage %d produce: %v", st+1, err)
			}
			committed, err := s.End(ctx, kgo.TryCommit)
			if err != nil && !quiet(err) {
				warn("stage %d end: %v", st+1, err)
			}
			if committed {
				forwarded.Add(int64(len(recs)))
			}
		}
		return
	}
	cl, err := kgo.NewClient(append(base, append(groupOpts(c), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll())...)...)
	if err != nil {
		fail("client: %v", err)
	}
	defer cl.Close()
	for !stop.Load() && ctx.Err() == nil {
		recs := poll(cl)
		if len(recs) > 0 {
			if err := cl.ProduceSync(ctx, copyRecords(recs)...).FirstErr(); err != nil {
				fail("stage %d produce: %v", st+1, err)
			}
			if err := cl.CommitRecords(ctx, recs...); err != nil && !quiet(err) {
				warn("stage %d commit: %v", st+1, err)
			} else {
				forwarded.Add(int64(len(recs)))
			}
		}
		cl.AllowRebalance()
	}
}

func produce(ctx context.Context, c *config) {
	cl, err := kgo.NewClient(append(hooks(), kgo.SeedBrokers(c.boot...), kgo.DefaultProduceTopic(c.topic(0)))...)
	if err != nil {
		fail("producer: %v", err)
	}
	defer cl.Close()
	var failed atomic.Int64
	var first atomic.Value
	for i := 0; i < c.n; i++ {
		v := []byte(strconv.Itoa(i))
		cl.Produce(ctx, &kgo.Record{Key: v, Value: v}, func(_ *kgo.Record, err error) {
			if err != nil && failed.Add(1) == 1 {
				first.Store(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		fail("producer flush: %v", err)
	}
	if failed.Load() > 0 {
		fail("producer: %d records failed: %v", failed.Load(), first.Load())
	}
}

func main() {
	var c config
	boot := flag.String("bootstrap", "", "bootstrap servers, comma separated")
	flag.IntVar(&c.n, "n", 500_000, "records")
	flag.IntVar(&c.partitions, "partitions", 6, "partitions of each topic")
	flag.IntVar(&c.rf, "rf", 3, "replication factor of each topic")
	flag.StringVar(&c.mode, "mode", "group", "group or txn")
	flag.StringVar(&c.balancer, "balancer", "cooperative", "eager, cooperative or consumer (KIP-848)")
	flag.IntVar(&c.members, "members", 2, "members of each group")
	flag.IntVar(&c.maxPoll, "max-poll", 500, "most records a stage takes per poll (and commits at once), as max.poll.records")
	flag.StringVar(&c.prefix, "prefix", fmt.Sprintf("pipe%d", time.Now().UnixNano()), "topic and group prefix")
	flag.DurationVar(&c.timeout, "timeout", 300*time.Second, "deadline of the whole run")
	requests := flag.Bool("requests", false, "count every client's requests and answer waits per API (printed as \"requests\")")
	flag.Parse()
	if *requests {
		stats = &requestStats{count: map[int16]int64{}, wait: map[int16]time.Duration{}}
	}
	if *boot == "" || c.n < 1 || c.members < 1 || (c.mode != "group" && c.mode != "txn") {
		fail("usage: -bootstrap HOST:PORT [-n N] [-mode group|txn] [-balancer eager|cooperative|consumer]")
	}
	c.boot = strings.Split(*boot, ",")
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	createTopics(ctx, &c)

	var warnings atomic.Int64
	var warnMu sync.Mutex
	warn := func(format string, args ...any) {
		if warnings.Add(1) <= 20 {
			warnMu.Lock()
			fmt.Fprintf(os.Stderr, "bench-pipeline: "+format+"\n", args...)
			warnMu.Unlock()
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	forwarded := make([]atomic.Int64, 3)
	start := time.Now()
	for st := 0; st < 3; st++ {
		for m := 0; m < c.members; m++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// member m joins once the group has forwarded m/(2*members) of the records
				want := int64(c.n) * int64(m) / int64(2*c.members)
				for forwarded[st].Load() < want && !stop.Load() && ctx.Err() == nil {
					time.Sleep(2 * time.Millisecond)
				}
				if !stop.Load() {
					stage(ctx, &c, st, &stop, &forwarded[st], warn)
				}
			}()
		}
	}
	wg.Add(1)
	go func() { defer wg.Done(); produce(ctx, &c) }()

	// the reader: topic 3 from the start, every record exactly once
	ropts := []kgo.Opt{
		kgo.SeedBrokers(c.boot...),
		kgo.ConsumeTopics(c.topic(3)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	if c.mode == "txn" {
		ropts = append(ropts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	ropts = append(ropts, hooks()...)
	reader, err := kgo.NewClient(ropts...)
	if err != nil {
		fail("reader: %v", err)
	}
	seen := make([]uint8, c.n)
	unique, dupes, alien := 0, 0, 0
	count := func(recs []*kgo.Record) {
		for _, r := range recs {
			i, err := strconv.Atoi(string(r.Value))
			if err != nil || i < 0 || i >= c.n {
				alien++
				continue
			}
			if seen[i] == 0 {
				unique++
			} else {
				dupes++
			}
			if seen[i] < 255 {
				seen[i]++
			}
		}
	}
	for unique < c.n && ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		count(reader.PollRecords(pctx, 50_000).Records())
		pcancel()
	}
	elapsed := time.Since(start)
	stop.Store(true)
	// anything more (a duplicate written late) within the stages' last poll
	tail := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(tail) {
		pctx, pcancel := context.WithDeadline(context.Background(), tail)
		count(reader.PollRecords(pctx, 50_000).Records())
		pcancel()
	}
	reader.Close()
	wg.Wait()
	if unique < c.n || dupes > 0 || alien > 0 {
		fail("topic 3 holds %d of %d records, %d duplicates, %d foreign (after %.1f s; %d warnings)",
			unique, c.n, dupes, alien, elapsed.Seconds(), warnings.Load())
	}
	result := map[string]any{
		"seconds": elapsed.Seconds(), "records": c.n, "mode": c.mode, "balancer": c.balancer,
		"members": c.members, "warnings": warnings.Load(),
	}
	if stats != nil {
		result["requests"] = stats.summary()
	}
	out, _ := json.Marshal(result)
	fmt.Println(string(out))
}
