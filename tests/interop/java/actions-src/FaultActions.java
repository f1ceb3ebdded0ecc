// Java kafka-clients under mockkafka's record-editing and connection fault actions, driven by
// tests/interop/test_fault_actions_java.py. One subcommand per scenario; each prints one JSON
// object on its last stdout line and exits 0, or prints the exception and exits 1. Every
// loop is bounded by a deadline. Compiles against kafka-clients 3.x and 4.x alike.

import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class FaultActions {
  static final Duration POLL = Duration.ofMillis(100);

  public static void main(String[] args) throws Exception {
    try {
      Map<String, Object> out;
      switch (args[0]) {
        case "read": out = read(args[1], args[2], Integer.parseInt(args[3]), args[4]); break;
        case "member": out = member(args[1], args[2], args[3], args[4], Integer.parseInt(args[5])); break;
        default: throw new IllegalArgumentException("unknown subcommand " + args[0]);
      }
      System.out.println(json(out));
      System.exit(0);
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1);
    }
  }

  static Properties base(String boot, String clientId) {
    Properties p = new Properties();
    p.put("bootstrap.servers", boot);
    p.put("client.id", clientId);
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    p.put("auto.offset.reset", "earliest");
    p.put("enable.auto.commit", "false");
    p.put("check.crcs", "true");  // edited batches must pass the client's CRC check
    p.put("retry.backoff.ms", "50");
    p.put("reconnect.backoff.ms", "50");
    p.put("reconnect.backoff.max.ms", "500");
    p.put("default.api.timeout.ms", "30000");
    return p;
  }

  static String b64(byte[] b) {
    return b == null ? null : Base64.getEncoder().encodeToString(b);
  }

  /** Partition 0 of topic from the start (no group) until n records, then 1 s more. */
  static Map<String, Object> read(String boot, String topic, int n, String maxBytes) {
    Properties p = base(boot, "java-reader");
    p.put("max.partition.fetch.bytes", maxBytes);
    List<Object> offsets = new ArrayList<>(), keys = new ArrayList<>(), values = new ArrayList<>();
    List<Object> timestamps = new ArrayList<>(), types = new ArrayList<>(), headers = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      TopicPartition tp = new TopicPartition(topic, 0);
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      long deadline = System.currentTimeMillis() + 20_000;
      long quiet = Long.MAX_VALUE;
      while (System.currentTimeMillis() < Math.min(deadline, quiet)) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(POLL)) {
          offsets.add(r.offset());
          keys.add(b64(r.key()));
          values.add(b64(r.value()));
          timestamps.add(r.timestamp());
          types.add(r.timestampType().toString());
          List<Object> hs = new ArrayList<>();
          r.headers().forEach(h -> hs.add(List.of(h.key(), b64(h.value()))));
          headers.add(hs);
        }
        if (offsets.size() >= n && quiet == Long.MAX_VALUE) quiet = System.currentTimeMillis() + 1000;
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("offsets", offsets);
    out.put("keys", keys);
    out.put("values", values);
    out.put("timestamps", timestamps);
    out.put("types", types);
    out.put("headers", headers);
    return out;
  }

  /** One group member polling for the given seconds; its assignment after each change. */
  static Map<String, Object> member(String boot, String topic, String group, String clientId,
      int seconds) {
    Properties p = base(boot, clientId);
    p.put("group.id", group);
    p.put("session.timeout.ms", "1500");
    p.put("heartbeat.interval.ms", "200");
    p.put("request.timeout.ms", "3000");
    p.put("partition.assignment.strategy", RangeAssignor.class.getName());
    List<Object> history = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      c.subscribe(List.of(topic));
      long deadline = System.currentTimeMillis() + seconds * 1000L;
      Set<Integer> last = null;
      while (System.currentTimeMillis() < deadline) {
        try {
          c.poll(POLL);
        } catch (org.apache.kafka.common.KafkaException e) {
          history.add(e.getClass().getSimpleName());  // e.g. a commit refused after eviction
        }
        Set<Integer> now = new TreeSet<>();
        for (TopicPartition tp : c.assignment()) now.add(tp.partition());
        if (!now.equals(last)) {
          history.add(new ArrayList<>(now));
          last = now;
        }
      }
    }
    return Map.of("history", history);
  }

  static String json(Object o) {
    if (o == null) return "null";
    if (o instanceof String) {
      return "\"" + ((String) o).replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
    if (o instanceof Number || o instanceof Boolean) return o.toString();
    if (o instanceof Map) {
      StringJoiner j = new StringJoiner(",", "{", "}");
      for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) j.add(json(e.getKey().toString()) + ":" + json(e.getValue()));
      return j.toString();
    }
    if (o instanceof Collection) {
      StringJoiner j = new StringJoiner(",", "[", "]");
      for (Object e : (Collection<?>) o) j.add(json(e));
      return j.toString();
    }
    return json(o.toString());
  }
}
