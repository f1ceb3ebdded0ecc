// Java kafka-clients driven by tests/interop/test_java_clients.py against mockkafka.
// One subcommand per scenario; each prints one JSON object on its last stdout line and exits
// 0, or prints the exception and exits 1. Every loop is bounded by a deadline.
// Compiles against kafka-clients 3.x and 4.x alike (only APIs present in both).

import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.serialization.*;

public final class Interop {
  static final Duration POLL = Duration.ofMillis(100);

  public static void main(String[] args) throws Exception {
    try {
      System.out.println(json(run(args[0], args[1], args)));
      System.exit(0);
    } catch (Throwable t) {
      t.printStackTrace();
      System.exit(1);  // also ends non-daemon client threads left behind
    }
  }

  static Map<String, Object> run(String cmd, String boot, String[] args) throws Exception {
    Map<String, Object> out;
    switch (cmd) {
      case "codecs": out = codecs(boot, args[2], Integer.parseInt(args[3])); break;
      case "produce": out = produce(boot, args[2], Integer.parseInt(args[3]), args[4]); break;
      case "consume": out = consume(boot, args[2], Integer.parseInt(args[3]), args[4]); break;
      case "txn": out = consumeTransformProduce(boot, args[2], args[3], args[4], args[5],
          Integer.parseInt(args[6])); break;
      case "fence": out = fence(boot, args[2], args[3]); break;
      case "group": out = group(boot, args[2], args[3], args[4], Integer.parseInt(args[5])); break;
      case "admin": out = admin(boot, args[2]); break;
      default: throw new IllegalArgumentException("unknown subcommand " + cmd);
    }
    return out;
  }

  // -- clients -------------------------------------------------------------------------------

  static Properties base(String boot) {
    Properties p = new Properties();
    p.put("bootstrap.servers", boot);
    p.put("client.id", "java-interop");
    p.put("metadata.max.age.ms", "1000");
    p.put("retry.backoff.ms", "50");
    p.put("reconnect.backoff.ms", "50");
    p.put("reconnect.backoff.max.ms", "500");
    p.put("request.timeout.ms", "10000");
    p.put("default.api.timeout.ms", "30000");
    // Security settings from cluster.client_config("java"), written by the test as a file.
    String extra = System.getenv("INTEROP_CLIENT_PROPERTIES");
    if (extra != null) {
      try (java.io.FileInputStream in = new java.io.FileInputStream(extra)) {
        p.load(in);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    return p;
  }

  static KafkaProducer<String, String> producer(String boot, Map<String, String> extra) {
    Properties p = base(boot);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("delivery.timeout.ms", "30000");
    p.put("linger.ms", "5");
    p.putAll(extra);
    return new KafkaProducer<>(p);
  }

  static KafkaConsumer<String, String> consumer(String boot, Map<String, String> extra) {
    Properties p = base(boot);
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    p.put("auto.offset.reset", "earliest");
    p.put("enable.auto.commit", "false");
    p.putAll(extra);
    return new KafkaConsumer<>(p);
  }

  static Map<String, String> kv(String... pairs) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) m.put(pairs[i], pairs[i + 1]);
    return m;
  }

  static List<TopicPartition> partitions(Consumer<?, ?> c, String topic) {
    List<TopicPartition> tps = new ArrayList<>();
    for (PartitionInfo info : c.partitionsFor(topic)) tps.add(new TopicPartition(topic, info.partition()));
    return tps;
  }

  /** Read ``topic`` from the beginning (assign, no group) until ``n`` records or 30 s. */
  static List<String> readAll(String boot, String topic, int n, String isolation) {
    List<String> seen = new ArrayList<>();
    try (KafkaConsumer<String, String> c = consumer(boot, kv("isolation.level", isolation))) {
      List<TopicPartition> tps = partitions(c, topic);
      c.assign(tps);
      c.seekToBeginning(tps);
      long deadline = System.currentTimeMillis() + 30_000;
      while (seen.size() < n && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : c.poll(POLL)) seen.add(r.value());
      }
    }
    return seen;
  }

  // -- scenarios -----------------------------------------------------------------------------

  /** Every codec: produce n records with it, read them back. */
  static Map<String, Object> codecs(String boot, String topic, int n) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    String[] codecs = {"none", "gzip", "snappy", "lz4", "zstd"};
    for (String codec : codecs) {
      try (KafkaProducer<String, String> p = producer(boot, kv("compression.type", codec))) {
        for (int i = 0; i < n; i++) p.send(new ProducerRecord<>(topic, "k" + i, codec + "-" + i)).get();
      }
    }
    List<String> seen = readAll(boot, topic, n * codecs.length, "read_uncommitted");
    for (String codec : codecs) {
      int count = 0;
      for (String v : seen) if (v.startsWith(codec + "-")) count++;
      out.put(codec, count);
    }
    return out;
  }

  /** Produce n records (acks=all) with the given idempotence; asynchronously, 5 in flight. */
  static Map<String, Object> produce(String boot, String topic, int n, String idempotent)
      throws Exception {
    Map<String, String> conf = kv("enable.idempotence", idempotent, "acks", "all",
        "max.in.flight.requests.per.connection", "5", "batch.size", "200", "linger.ms", "0");
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<String, String> p = producer(boot, conf)) {
      for (int i = 0; i < n; i++) sent.add(p.send(new ProducerRecord<>(topic, "k" + (i % 7), "v" + i)));
      p.flush();
      for (Future<RecordMetadata> f : sent) f.get(30, TimeUnit.SECONDS);
    }
    return Map.of("acked", sent.size());
  }

  /** Consume until n records (assigned partitions, from the beginning). */
  static Map<String, Object> consume(String boot, String topic, int n, String isolation) {
    List<String> seen = readAll(boot, topic, n, isolation);
    return Map.of("seen", seen);
  }

  /** Consume-transform-produce in transactions, one aborted first; offsets in the txn. */
  static Map<String, Object> consumeTransformProduce(String boot, String in, String out,
      String groupId, String txnId, int n) throws Exception {
    int transactions = 0;
    int copied = 0;
    try (KafkaProducer<String, String> p = producer(boot, kv("transactional.id", txnId,
            "transaction.timeout.ms", "30000"));
        KafkaConsumer<String, String> c = consumer(boot, kv("group.id", groupId,
            "isolation.level", "read_committed"))) {
      p.initTransactions();
      p.beginTransaction();
      p.send(new ProducerRecord<>(out, "aborted", "aborted")).get();
      p.abortTransaction();
      c.subscribe(List.of(in));
      long deadline = System.currentTimeMillis() + 45_000;
      while (copied < n && System.currentTimeMillis() < deadline) {
        ConsumerRecords<String, String> records = c.poll(POLL);
        if (records.isEmpty()) continue;
        p.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (ConsumerRecord<String, String> r : records) {
          p.send(new ProducerRecord<>(out, r.key(), r.value().toUpperCase()));
          offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
          copied++;
        }
        p.sendOffsetsToTransaction(offsets, c.groupMetadata());
        p.commitTransaction();
        transactions++;
      }
    }
    return Map.of("copied", copied, "transactions", transactions);
  }

  /** A second producer with the same transactional id fences the first. */
  static Map<String, Object> fence(String boot, String topic, String txnId) throws Exception {
    String error = "none";
    try (KafkaProducer<String, String> first = producer(boot, kv("transactional.id", txnId))) {
      first.initTransactions();
      first.beginTransaction();
      first.send(new ProducerRecord<>(topic, "k", "from-first")).get();
      try (KafkaProducer<String, String> second = producer(boot, kv("transactional.id", txnId))) {
        second.initTransactions();
        second.beginTransaction();
        second.send(new ProducerRecord<>(topic, "k", "from-second")).get();
        second.commitTransaction();
      }
      try {
        first.send(new ProducerRecord<>(topic, "k", "late")).get();
        first.commitTransaction();
      } catch (Exception e) {
        Throwable t = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        error = t.getClass().getSimpleName();
      }
    }
    return Map.of("first_error", error);
  }

  /** Two consumers of one group share ``topic`` (protocol eager, cooperative or consumer). */
  static Map<String, Object> group(String boot, String topic, String groupId, String protocol,
      int n) throws Exception {
    Map<String, String> conf = kv("group.id", groupId);
    switch (protocol) {
      case "eager": conf.put("partition.assignment.strategy", RangeAssignor.class.getName()); break;
      case "cooperative":
        conf.put("partition.assignment.strategy", CooperativeStickyAssignor.class.getName()); break;
      case "consumer": conf.put("group.protocol", "consumer"); break;
      default: throw new IllegalArgumentException("protocol " + protocol);
    }
    if (!protocol.equals("consumer")) {  // the broker sets these under group.protocol=consumer
      conf.put("session.timeout.ms", "10000");
      conf.put("heartbeat.interval.ms", "200");
    }
    AtomicInteger total = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentHashMap<String, Set<Integer>> assigned = new ConcurrentHashMap<>();
    AtomicReference<Map<String, Set<Integer>>> settled = new AtomicReference<>(Map.of());
    ExecutorService pool = Executors.newFixedThreadPool(2);
    List<Future<Integer>> results = new ArrayList<>();
    for (int m = 0; m < 2; m++) {
      final String name = "member" + m;
      results.add(pool.submit(() -> {
        int mine = 0;
        KafkaConsumer<String, String> c = consumer(boot, conf);
        try {
          c.subscribe(List.of(topic));
          long deadline = System.currentTimeMillis() + 30_000;
          while (!stop.get() && System.currentTimeMillis() < deadline) {
            ConsumerRecords<String, String> rs = c.poll(POLL);
            mine += rs.count();
            if (!rs.isEmpty()) commitOrRetryLater(c);
            Set<Integer> parts = new TreeSet<>();
            for (TopicPartition tp : c.assignment()) parts.add(tp.partition());
            assigned.put(name, parts);
            Map<String, Set<Integer>> snapshot = new HashMap<>(assigned);
            if (total.addAndGet(rs.count()) >= n && bothAssigned(snapshot)) {
              settled.compareAndSet(Map.of(), snapshot);
              stop.set(true);
            }
          }
          commitOrRetryLater(c);
        } finally {
          c.close(Duration.ofSeconds(5));
        }
        return mine;
      }));
    }
    int consumed = 0;
    try {
      for (Future<Integer> f : results) consumed += f.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("consumed", consumed);
    out.put("assignments", settled.get());
    out.put("last_seen", new LinkedHashMap<>(assigned));
    return out;
  }

  /** A commit refused by a rebalance is normal: the next poll() completes it, then retry. */
  static void commitOrRetryLater(KafkaConsumer<String, String> c) {
    try {
      c.commitSync();
    } catch (RebalanceInProgressException | CommitFailedException e) {
      // The new owner re-reads from the last committed offset.
    }
  }

  /** Both members hold partitions, and no partition is held twice (the rebalance settled). */
  static boolean bothAssigned(Map<String, Set<Integer>> assigned) {
    if (assigned.size() != 2 || assigned.values().stream().anyMatch(Set::isEmpty)) return false;
    Set<Integer> all = new HashSet<>();
    int held = 0;
    for (Set<Integer> parts : assigned.values()) { all.addAll(parts); held += parts.size(); }
    return all.size() == held;
  }

  /** The Admin calls an application makes every day. */
  static Map<String, Object> admin(String boot, String topic) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    Properties p = base(boot);
    try (Admin a = Admin.create(p)) {
      out.put("cluster_nodes", a.describeCluster().nodes().get().size());
      a.createTopics(List.of(new NewTopic(topic, 2, (short) 3)
          .configs(Map.of("retention.ms", "3600000")))).all().get();
      out.put("listed", a.listTopics().names().get().contains(topic));
      a.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get();
      TopicDescription d = a.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      out.put("partitions", d.partitions().size());
      out.put("replicas", d.partitions().get(0).replicas().size());
      ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      a.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
          new ConfigEntry("cleanup.policy", "compact,delete"), AlterConfigOp.OpType.SET)))).all().get();
      Config cfg = a.describeConfigs(List.of(res)).all().get().get(res);
      out.put("cleanup.policy", cfg.get("cleanup.policy").value());
      out.put("retention.ms", cfg.get("retention.ms").value());
      try (KafkaProducer<String, String> prod = producer(boot, Map.of())) {
        for (int i = 0; i < 10; i++) prod.send(new ProducerRecord<>(topic, 0, "k", "v" + i)).get();
      }
      TopicPartition tp0 = new TopicPartition(topic, 0);
      a.deleteRecords(Map.of(tp0, RecordsToDelete.beforeOffset(4))).all().get();
      out.put("earliest", a.listOffsets(Map.of(tp0, OffsetSpec.earliest())).all().get().get(tp0).offset());
      out.put("latest", a.listOffsets(Map.of(tp0, OffsetSpec.latest())).all().get().get(tp0).offset());
      String g = topic + "-group";
      a.alterConsumerGroupOffsets(g, Map.of(tp0, new OffsetAndMetadata(7))).all().get();
      out.put("group_offset",
          a.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get().get(tp0).offset());
      out.put("group_described", a.describeConsumerGroups(List.of(g)).all().get().containsKey(g));
      a.deleteConsumerGroups(List.of(g)).all().get();
      a.deleteTopics(List.of(topic)).all().get();
      out.put("deleted", !a.listTopics().names().get().contains(topic));
    }
    return out;
  }

  // -- output --------------------------------------------------------------------------------

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
