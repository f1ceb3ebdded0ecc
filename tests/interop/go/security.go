package main

// Security settings for both Go clients, from INTEROP_CLIENT_CONFIG: a JSON file holding
// what cluster.client_config("confluent") gives (librdkafka's names: security.protocol,
// ssl.ca.location, ssl.certificate.location, ssl.key.location, sasl.mechanism,
// sasl.username, sasl.password). Without it the clients speak PLAINTEXT.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

type security struct {
	tls       *tls.Config
	mechanism string
	user      string
	password  string
}

func loadSecurity() (*security, error) {
	path := os.Getenv("INTEROP_CLIENT_CONFIG")
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	conf := map[string]any{}
	if err := json.Unmarshal(raw, &conf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	get := func(k string) string { s, _ := conf[k].(string); return s }
	sec := &security{mechanism: get("sasl.mechanism"), user: get("sasl.username"), password: get("sasl.password")}
	if strings.HasSuffix(get("security.protocol"), "SSL") {
		pem, err := os.ReadFile(get("ssl.ca.location"))
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no CA certificate in %s", get("ssl.ca.location"))
		}
		sec.tls = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
		if crt := get("ssl.certificate.location"); crt != "" {
			pair, err := tls.LoadX509KeyPair(crt, get("ssl.key.location"))
			if err != nil {
				return nil, err
			}
			sec.tls.Certificates = []tls.Certificate{pair}
		}
	}
	return sec, nil
}

// kgoSecurity: the kgo options for the configured TLS and SASL.
func kgoSecurity() ([]kgo.Opt, error) {
	sec, err := loadSecurity()
	if sec == nil || err != nil {
		return nil, err
	}
	var opts []kgo.Opt
	if sec.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(sec.tls))
	}
	switch sec.mechanism {
	case "":
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: sec.user, Pass: sec.password}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: sec.user, Pass: sec.password}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: sec.user, Pass: sec.password}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("kgo interop: mechanism %q not wired", sec.mechanism)
	}
	return opts, nil
}

// saramaSecurity: TLS and SASL PLAIN on a sarama config (sarama's SCRAM needs a
// user-supplied SCRAM client, which this module does not carry).
func saramaSecurity(cfg *sarama.Config) error {
	sec, err := loadSecurity()
	if sec == nil || err != nil {
		return err
	}
	if sec.tls != nil {
		cfg.Net.TLS.Enable = true
		cfg.Net.TLS.Config = sec.tls
	}
	switch sec.mechanism {
	case "":
	case "PLAIN":
		cfg.Net.SASL.Enable = true
		cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		cfg.Net.SASL.User = sec.user
		cfg.Net.SASL.Password = sec.password
		cfg.Net.SASL.Handshake = true
	default:
		return fmt.Errorf("sarama interop: mechanism %q not wired", sec.mechanism)
	}
	return nil
}
