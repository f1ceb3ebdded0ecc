package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoShare: two franz-go share consumers (KIP-932) of one group read n plain records plus
// "release-me" (released on its first delivery, accepted on the second) and "reject-me"
// (rejected: never again); then kadm describes the share group.
func kgoShare(ctx context.Context, boot []string, topic, group string, n int) (map[string]any, error) {
	names := []string{"a", "b"}
	clients := make([]*kgo.Client, 0, len(names))
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	for _, name := range names {
		cl, err := kgoClient(boot, kgo.ClientID("share-"+name), kgo.ConsumeTopics(topic), kgo.ShareGroup(group))
		if err != nil {
			return nil, err
		}
		clients = append(clients, cl)
	}
	seen := map[string][]string{}
	releaseCounts := []int{}
	rejects, accepted, maxPlain := 0, 0, 0
	deadline := time.Now().Add(50 * time.Second)
	var quietUntil time.Time
	for time.Now().Before(deadline) && (quietUntil.IsZero() || time.Now().Before(quietUntil)) {
		for i, cl := range clients {
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			fs := cl.PollFetches(pctx)
			cancel()
			for _, fe := range fs.Errors() {
				if !errors.Is(fe.Err, context.DeadlineExceeded) && !errors.Is(fe.Err, context.Canceled) {
					return nil, fe.Err
				}
			}
			fs.EachRecord(func(r *kgo.Record) {
				v, count := string(r.Value), int(r.DeliveryCount())
				if v == "release-me" {
					releaseCounts = append(releaseCounts, count)
					if count == 1 {
						r.Ack(kgo.AckRelease)
						return
					}
				}
				if v == "reject-me" {
					rejects++
					r.Ack(kgo.AckReject)
					return
				}
				r.Ack(kgo.AckAccept)
				accepted++
				seen[names[i]] = append(seen[names[i]], v)
				if strings.HasPrefix(v, "v") && count > maxPlain {
					maxPlain = count
				}
			})
			fctx, fcancel := context.WithTimeout(ctx, 10*time.Second)
			err := cl.FlushAcks(fctx)
			fcancel()
			if err != nil {
				return nil, err
			}
		}
		if accepted >= n+1 && quietUntil.IsZero() {
			quietUntil = time.Now().Add(1500 * time.Millisecond)
		}
	}
	described, err := kadm.NewClient(clients[0]).DescribeShareGroups(ctx, group)
	if err != nil {
		return nil, err
	}
	g := described[group]
	if g.Err != nil {
		return nil, g.Err
	}
	return map[string]any{
		"seen":                     seen,
		"release_delivery_counts":  releaseCounts,
		"reject_deliveries":        rejects,
		"accepted":                 accepted,
		"max_plain_delivery_count": maxPlain,
		"described_members":        len(g.Members),
		"described_state":          g.GroupState,
	}, nil
}
