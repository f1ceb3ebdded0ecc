// A Kafka Streams word count (group.protocol=streams, KIP-1071) driven by
// tests/interop/test_java_streams.py against mockkafka. Arguments: bootstrap input output
// application-id state-dir stop-file. Runs until stop-file exists (at most 120 s), printing
// "RUNNING" once the instance runs, then one JSON object on its last stdout line.

import java.nio.file.*;
import java.util.*;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.kstream.*;

public final class WordCount {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[3]);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
    p.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.consumerPrefix("metadata.max.age.ms"), "1000");
    p.put("retry.backoff.ms", "50");
    p.put("reconnect.backoff.max.ms", "500");

    StreamsBuilder b = new StreamsBuilder();
    b.<String, String>stream(args[1])
        .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
        .filter((k, w) -> !w.isEmpty())
        .groupBy((k, w) -> w)
        .count()
        .toStream()
        .to(args[2], Produced.with(Serdes.String(), Serdes.Long()));

    Map<String, Object> out = new TreeMap<>();
    List<String> states = Collections.synchronizedList(new ArrayList<>());
    try (KafkaStreams streams = new KafkaStreams(b.build(), p)) {
      streams.setStateListener((now, before) -> states.add(now.toString()));
      streams.start();
      long deadline = System.currentTimeMillis() + 120_000;
      boolean announced = false;
      while (System.currentTimeMillis() < deadline && !Files.exists(Paths.get(args[5]))) {
        if (!announced && streams.state() == KafkaStreams.State.RUNNING) {
          System.out.println("RUNNING");
          System.out.flush();
          announced = true;
        }
        if (streams.state() == KafkaStreams.State.ERROR) break;
        Thread.sleep(50);
      }
      out.put("final_state", streams.state().toString());
      out.put("stopped_by_file", Files.exists(Paths.get(args[5])));
    }
    out.put("states", new ArrayList<>(states));
    StringBuilder sb = new StringBuilder("{");
    for (Map.Entry<String, Object> e : out.entrySet()) {
      if (sb.length() > 1) sb.append(',');
      sb.append('"').append(e.getKey()).append("\":");
      Object v = e.getValue();
      if (v instanceof List) {
        sb.append('[');
        List<?> l = (List<?>) v;
        for (int i = 0; i < l.size(); i++) sb.append(i > 0 ? "," : "").append('"').append(l.get(i)).append('"');
        sb.append(']');
      } else if (v instanceof Boolean) {
        sb.append(v);
      } else {
        sb.append('"').append(v).append('"');
      }
    }
    System.out.println(sb.append('}'));
    System.exit(0);
  }
}
