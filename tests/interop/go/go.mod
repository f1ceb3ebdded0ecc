module mockkafka.dev/interop

go 1.26.0

require (
	github.com/IBM/sarama v1.61.1
	github.com/twmb/franz-go v1.22.2
	github.com/twmb/franz-go/pkg/kadm v1.19.0
)
