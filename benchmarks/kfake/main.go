// Command bench-kfake starts franz-go's kfake (a fake Kafka cluster in Go) on 127.0.0.1
// for benchmarks/compare.py: it prints "bootstrap.servers=HOST:PORT,..." once every broker
// listens and every -topic exists, then serves until SIGINT or SIGTERM.
//
//	bench-kfake -brokers 3 -topic bench:32 -topic txn:3
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

type topics []string

func (t *topics) String() string     { return strings.Join(*t, ",") }
func (t *topics) Set(s string) error { *t = append(*t, s); return nil }

func main() {
	brokers := flag.Int("brokers", 3, "number of brokers")
	var ts topics
	flag.Var(&ts, "topic", "NAME:PARTITIONS to create before printing the address (repeatable)")
	flag.Parse()

	c, err := kfake.NewCluster(kfake.NumBrokers(*brokers), kfake.AllowAutoTopicCreation())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-kfake:", err)
		os.Exit(1)
	}
	defer c.Close()
	for _, t := range ts {
		name, parts, _ := strings.Cut(t, ":")
		n, err := strconv.Atoi(parts)
		if err != nil || n < 1 {
			n = 1
		}
		if err := c.CreateTopic(name, int32(n), nil); err != nil {
			fmt.Fprintf(os.Stderr, "bench-kfake: topic %s: %v\n", name, err)
			os.Exit(1)
		}
	}
	fmt.Printf("bootstrap.servers=%s\n", strings.Join(c.ListenAddrs(), ","))
	os.Stdout.Sync()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
}
