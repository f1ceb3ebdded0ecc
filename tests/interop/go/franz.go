package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func kgoClient(boot []string, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{
		kgo.SeedBrokers(boot...),
		kgo.ClientID("go-kgo-interop"),
		kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}
	sec, err := kgoSecurity()
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(append(append(base, sec...), opts...)...)
}

// kgoProduce: n records, idempotent (kgo's default), zstd, acks=all, synchronously flushed.
func kgoProduce(ctx context.Context, boot []string, topic string, n int) (map[string]any, error) {
	cl, err := kgoClient(boot, kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.DefaultProduceTopic(topic), kgo.MaxBufferedRecords(n+1))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%7)), Value: []byte(fmt.Sprintf("v%d", i))}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, err
	}
	return map[string]any{"acked": n}, nil
}

// kgoGroup: two members of one group consume n records between them and commit.
func kgoGroup(ctx context.Context, boot []string, topic, group string, n int) (map[string]any, error) {
	type result struct {
		count int
		err   error
	}
	total := make(chan int, 1000)
	done := make(chan struct{})
	results := make(chan result, 2)
	for m := 0; m < 2; m++ {
		go func() {
			cl, err := kgoClient(boot, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
				kgo.DisableAutoCommit(), kgo.Balancers(kgo.CooperativeStickyBalancer()))
			if err != nil {
				results <- result{0, err}
				return
			}
			defer cl.Close()
			mine := 0
			for {
				select {
				case <-done:
					results <- result{mine, cl.CommitUncommittedOffsets(ctx)}
					return
				case <-ctx.Done():
					results <- result{mine, ctx.Err()}
					return
				default:
				}
				pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				fetches := cl.PollFetches(pctx)
				cancel()
				got := 0
				fetches.EachRecord(func(*kgo.Record) { got++ })
				if got > 0 {
					mine += got
					total <- got
					if err := cl.CommitUncommittedOffsets(ctx); err != nil {
						results <- result{mine, err}
						return
					}
				}
			}
		}()
	}
	seen := 0
	for seen < n {
		select {
		case got := <-total:
			seen += got
		case <-ctx.Done():
			close(done)
			return nil, fmt.Errorf("consumed %d of %d before the deadline", seen, n)
		}
	}
	close(done)
	counts := []int{}
	for m := 0; m < 2; m++ {
		r := <-results
		if r.err != nil {
			return nil, r.err
		}
		counts = append(counts, r.count)
	}
	return map[string]any{"consumed": seen, "per_member": counts}, nil
}

// kgoTransact: consume-transform-produce with a GroupTransactSession (offsets in the txn);
// one transaction is aborted first.
func kgoTransact(ctx context.Context, boot []string, in, out, group, txn string, n int) (map[string]any, error) {
	s, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(boot...),
		kgo.TransactionalID(txn),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(in),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.DefaultProduceTopic(out),
		kgo.MetadataMinAge(100*time.Millisecond),
	)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := s.Begin(); err != nil {
		return nil, err
	}
	if err := s.ProduceSync(ctx, &kgo.Record{Value: []byte("aborted")}).FirstErr(); err != nil {
		return nil, err
	}
	if _, err := s.End(ctx, kgo.TryAbort); err != nil {
		return nil, err
	}
	copied, txns := 0, 0
	for copied < n {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("copied %d of %d before the deadline", copied, n)
		}
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fetches := s.PollFetches(pctx)
		cancel()
		var recs []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) {
			recs = append(recs, &kgo.Record{Key: r.Key, Value: []byte(strings.ToUpper(string(r.Value)))})
		})
		if len(recs) == 0 {
			continue
		}
		if err := s.Begin(); err != nil {
			return nil, err
		}
		if err := s.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return nil, err
		}
		committed, err := s.End(ctx, kgo.TryCommit)
		if err != nil {
			return nil, err
		}
		if committed {
			copied += len(recs)
			txns++
		}
	}
	return map[string]any{"copied": copied, "transactions": txns}, nil
}

// kadmEveryday: the admin calls an application makes every day.
func kadmEveryday(ctx context.Context, boot []string, topic string) (map[string]any, error) {
	cl, err := kgoClient(boot)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	out := map[string]any{}
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	out["brokers"] = len(meta.Brokers)
	created, err := adm.CreateTopics(ctx, 2, 3, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}, topic)
	if err == nil {
		err = created.Error()
	}
	if err != nil {
		return nil, err
	}
	if _, err := adm.UpdatePartitions(ctx, 4, topic); err != nil {
		return nil, err
	}
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, err
	}
	out["partitions"] = len(details[topic].Partitions)
	alter := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact,delete")}}
	if _, err := adm.AlterTopicConfigs(ctx, alter, topic); err != nil {
		return nil, err
	}
	configs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return nil, err
	}
	for _, c := range configs[0].Configs {
		if (c.Key == "cleanup.policy" || c.Key == "retention.ms") && c.Value != nil {
			out[c.Key] = *c.Value
		}
	}
	recs := make([]*kgo.Record, 10)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprint(i))}
	}
	pcl, err := kgoClient(boot, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	defer pcl.Close()
	if err := pcl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, err
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: topic, Partition: 0, At: 4})
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		return nil, err
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	start, _ := starts.Lookup(topic, 0)
	out["earliest"] = start.Offset
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	end, _ := ends.Lookup(topic, 0)
	out["latest"] = end.Offset
	group := topic + "-group"
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: topic, Partition: 0, At: 7, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, group, commit); err != nil {
		return nil, err
	}
	fetched, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	got, _ := fetched.Lookup(topic, 0)
	out["group_offset"] = got.At
	if _, err := adm.DeleteTopics(ctx, topic); err != nil {
		return nil, err
	}
	after, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	out["deleted"] = !after.Has(topic)
	return out, nil
}
