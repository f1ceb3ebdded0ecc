package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "go-sarama-interop"
	cfg.Version = sarama.V3_6_0_0
	cfg.Metadata.Retry.Backoff = 50 * time.Millisecond
	cfg.Metadata.RefreshFrequency = time.Second
	cfg.Producer.Retry.Backoff = 50 * time.Millisecond
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	if err := saramaSecurity(cfg); err != nil {
		fail(err)
	}
	return cfg
}

// saramaProduce: n records with an idempotent SyncProducer, snappy.
func saramaProduce(boot []string, topic string, n int) (map[string]any, error) {
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Compression = sarama.CompressionSnappy
	p, err := sarama.NewSyncProducer(boot, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, n)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprintf("k%d", i%7)),
			Value: sarama.StringEncoder(fmt.Sprintf("v%d", i))}
	}
	if err := p.SendMessages(msgs); err != nil {
		return nil, err
	}
	return map[string]any{"acked": n}, nil
}

type groupHandler struct {
	mu   sync.Mutex
	seen int
	want int
	stop context.CancelFunc
}

func (h *groupHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *groupHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *groupHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		s.MarkMessage(msg, "")
		s.Commit()
		h.mu.Lock()
		h.seen++
		if h.seen >= h.want {
			h.stop()
		}
		h.mu.Unlock()
	}
	return nil
}

// saramaGroup: one group member consumes n records from the start, committing as it goes.
func saramaGroup(ctx context.Context, boot []string, topic, group string, n int) (map[string]any, error) {
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRoundRobin()}
	cg, err := sarama.NewConsumerGroup(boot, group, cfg)
	if err != nil {
		return nil, err
	}
	defer cg.Close()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &groupHandler{want: n, stop: cancel}
	for cctx.Err() == nil {
		if err := cg.Consume(cctx, []string{topic}, h); err != nil && cctx.Err() == nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("consumed %d of %d before the deadline", h.seen, n)
	}
	return map[string]any{"consumed": h.seen}, nil
}

// saramaTransact: one aborted and one committed transaction.
func saramaTransact(boot []string, topic, txn string) (map[string]any, error) {
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = txn
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(boot, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	for _, outcome := range []string{"aborted", "committed"} {
		if err := p.BeginTxn(); err != nil {
			return nil, err
		}
		for i := 0; i < 3; i++ {
			msg := &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", outcome, i))}
			if _, _, err := p.SendMessage(msg); err != nil {
				return nil, err
			}
		}
		if outcome == "aborted" {
			err = p.AbortTxn()
		} else {
			err = p.CommitTxn()
		}
		if err != nil {
			return nil, err
		}
	}
	return map[string]any{"transactions": 2}, nil
}

// saramaAdmin: ClusterAdmin everyday calls.
func saramaAdmin(boot []string, topic string) (map[string]any, error) {
	adm, err := sarama.NewClusterAdmin(boot, saramaConfig())
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	out := map[string]any{}
	if err := adm.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 3}, false); err != nil {
		return nil, err
	}
	if err := adm.CreatePartitions(topic, 3, nil, false); err != nil {
		return nil, err
	}
	topics, err := adm.ListTopics()
	if err != nil {
		return nil, err
	}
	out["partitions"] = topics[topic].NumPartitions
	value := "86400000"
	if err := adm.AlterConfig(sarama.TopicResource, topic, map[string]*string{"retention.ms": &value}, false); err != nil {
		return nil, err
	}
	entries, err := adm.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic, ConfigNames: []string{"retention.ms"}})
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		out[e.Name] = e.Value
	}
	if err := adm.DeleteRecords(topic, map[int32]int64{0: 0}); err != nil {
		return nil, err
	}
	groups, err := adm.ListConsumerGroups()
	if err != nil {
		return nil, err
	}
	out["groups"] = len(groups)
	if err := adm.DeleteTopic(topic); err != nil {
		return nil, err
	}
	return out, nil
}
