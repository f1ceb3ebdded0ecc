// A Kafka Streams word count for the Java tier (tests/interop/test_java_streams.py), run with
// group.protocol=streams (KIP-1071: the broker assigns the tasks).
//
//   StreamsInterop BOOTSTRAP APP_ID INPUT OUTPUT SECONDS [PROTOCOL]
//
// Runs the topology until its standard input closes (the test closes it once OUTPUT holds what
// it expects) or SECONDS pass; prints one JSON line: the state it reached, whether it ever
// ran, the active tasks it held last and how often it rebalanced. The test reads OUTPUT from
// the broker.
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.kstream.*;
import org.apache.kafka.streams.processor.TaskId;

public class StreamsInterop {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], appId = args[1], input = args[2], output = args[3];
        long seconds = Long.parseLong(args[4]);
        String protocol = args.length > 5 ? args[5] : "streams";
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.STATE_DIR_CONFIG,
              java.nio.file.Files.createTempDirectory("streams-interop").toString());
        p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");

        StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream(input)
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((k, w) -> !w.isEmpty())
            .groupBy((k, w) -> w)
            .count(Materialized.as("counts"))
            .toStream()
            .mapValues(Object::toString)
            .to(output);

        AtomicInteger rebalances = new AtomicInteger();
        AtomicReference<KafkaStreams.State> last = new AtomicReference<>();
        KafkaStreams streams = new KafkaStreams(b.build(), p);
        streams.setStateListener((now, before) -> {
            last.set(now);
            if (now == KafkaStreams.State.REBALANCING) rebalances.incrementAndGet();
        });
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
        Thread stdin = new Thread(() -> {
            try { while (System.in.read() != -1) { } } catch (java.io.IOException e) { }
            stop.countDown();
        });
        stdin.setDaemon(true);
        stdin.start();
        streams.start();
        long deadline = System.currentTimeMillis() + seconds * 1000;
        boolean wasRunning = false;
        List<String> tasks = new ArrayList<>();
        System.err.println("STREAMS-INTEROP started");
        while (System.currentTimeMillis() < deadline && stop.getCount() > 0) {
            if (streams.state() == KafkaStreams.State.RUNNING) {
                wasRunning = true;
                tasks.clear();
                for (ThreadMetadata t : streams.metadataForLocalThreads())
                    for (TaskMetadata tm : t.activeTasks()) tasks.add(tm.taskId().toString());
                Collections.sort(tasks);
            }
            if (streams.state() == KafkaStreams.State.ERROR) break;
            stop.await(100, TimeUnit.MILLISECONDS);
        }
        KafkaStreams.State end = streams.state();
        streams.close(Duration.ofSeconds(20));
        System.out.println("{\"state\":\"" + end + "\",\"was_running\":" + wasRunning
            + ",\"rebalances\":" + rebalances.get() + ",\"tasks\":\"" + String.join(" ", tasks) + "\"}");
    }
}
