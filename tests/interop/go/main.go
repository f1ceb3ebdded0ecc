// Go clients (franz-go kgo/kadm and IBM sarama) driven by tests/interop/test_go_clients.py
// against mockkafka. One subcommand per scenario; each prints one JSON object on its last
// stdout line and exits 0, or prints the error and exits 1. Every loop has a deadline.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fail(fmt.Errorf("usage: interop SUBCOMMAND BOOTSTRAP ARGS..."))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, boot, args := os.Args[1], strings.Split(os.Args[2], ","), os.Args[3:]
	var out map[string]any
	var err error
	switch cmd {
	case "kgo-produce":
		out, err = kgoProduce(ctx, boot, args[0], atoi(args[1]))
	case "kgo-group":
		out, err = kgoGroup(ctx, boot, args[0], args[1], atoi(args[2]))
	case "kgo-txn":
		out, err = kgoTransact(ctx, boot, args[0], args[1], args[2], args[3], atoi(args[4]))
	case "kadm":
		out, err = kadmEveryday(ctx, boot, args[0])
	case "kgo-share":
		out, err = kgoShare(ctx, boot, args[0], args[1], atoi(args[2]))
	case "sarama-produce":
		out, err = saramaProduce(boot, args[0], atoi(args[1]))
	case "sarama-group":
		out, err = saramaGroup(ctx, boot, args[0], args[1], atoi(args[2]))
	case "sarama-txn":
		out, err = saramaTransact(boot, args[0], args[1])
	case "sarama-admin":
		out, err = saramaAdmin(boot, args[0])
	default:
		err = fmt.Errorf("unknown subcommand %q", cmd)
	}
	if err != nil {
		fail(err)
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(err)
	}
	return n
}
