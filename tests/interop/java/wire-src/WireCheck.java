// Kafka's own message classes read and re-write bytes that mockkafka's codec wrote
// (tests/interop/test_java_wire.py). Reads lines "MessageName version hex" on stdin and answers
// each with one JSON line on stdout:
//   {"hex": "<Kafka's bytes for the message it read>", "value": {<every field Kafka read>}}
//   {"unsupported": [lowest, highest]}   when kafka-clients has no such version
//   {"error": "<exception>"}             when Kafka cannot read the bytes
// "range MessageName" answers {"range": [lowest, highest]} (or {"missing": true}).
// Field values are dumped by reflection over the generated *Data classes (field names are the
// schema's, first letter lower-cased): uuids and bytes as hex, records as hex, arrays as lists.

import java.io.*;
import java.lang.reflect.*;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.*;
import org.apache.kafka.common.record.internal.MemoryRecords;

public final class WireCheck {
  static final HexFormat HEX = HexFormat.of();

  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      String[] parts = line.trim().split(" ", -1);
      if (parts.length == 0 || parts[0].isEmpty()) continue;
      StringBuilder sb = new StringBuilder();
      try {
        if (parts[0].equals("range")) {
          rangeOf(parts[1], sb);
        } else {
          check(parts[0], Short.parseShort(parts[1]), parts.length > 2 ? parts[2] : "", sb);
        }
      } catch (Throwable t) {
        if (t instanceof InvocationTargetException && t.getCause() != null) t = t.getCause();
        sb.setLength(0);
        sb.append("{\"error\":");
        str(sb, t.toString());
        sb.append('}');
      }
      out.println(sb);
      out.flush();
    }
  }

  static Class<?> dataClass(String name) {
    try {
      return Class.forName("org.apache.kafka.common.message." + name + "Data");
    } catch (ClassNotFoundException e) {
      return null;
    }
  }

  static short[] range(Class<?> cls) throws Exception {
    return new short[] {
      cls.getField("LOWEST_SUPPORTED_VERSION").getShort(null),
      cls.getField("HIGHEST_SUPPORTED_VERSION").getShort(null)
    };
  }

  static void rangeOf(String name, StringBuilder sb) throws Exception {
    Class<?> cls = dataClass(name);
    if (cls == null) {
      sb.append("{\"missing\":true}");
      return;
    }
    short[] r = range(cls);
    sb.append("{\"range\":[").append(r[0]).append(',').append(r[1]).append("]}");
  }

  static void check(String name, short version, String hex, StringBuilder sb) throws Exception {
    Class<?> cls = dataClass(name);
    if (cls == null) {
      sb.append("{\"missing\":true}");
      return;
    }
    short[] r = range(cls);
    if (version < r[0] || version > r[1]) {
      sb.append("{\"unsupported\":[").append(r[0]).append(',').append(r[1]).append("]}");
      return;
    }
    ByteBuffer buf = ByteBuffer.wrap(HEX.parseHex(hex));
    Message msg = (Message) cls.getConstructor(org.apache.kafka.common.protocol.Readable.class, short.class)
        .newInstance(new ByteBufferAccessor(buf), version);
    if (buf.remaining() != 0) {
      throw new IllegalStateException(buf.remaining() + " bytes left after reading");
    }
    ObjectSerializationCache cache = new ObjectSerializationCache();
    int size = msg.size(cache, version);
    ByteBuffer written = ByteBuffer.allocate(size);
    msg.write(new ByteBufferAccessor(written), cache, version);
    sb.append("{\"hex\":\"").append(HEX.formatHex(written.array())).append("\",\"value\":");
    value(sb, msg);
    sb.append('}');
  }

  static void value(StringBuilder sb, Object v) throws Exception {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Message) {
      sb.append('{');
      boolean first = true;
      for (Field f : v.getClass().getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers()) || f.getName().startsWith("_")) continue;
        f.setAccessible(true);
        if (!first) sb.append(',');
        first = false;
        str(sb, f.getName());
        sb.append(':');
        value(sb, f.get(v));
      }
      sb.append('}');
    } else if (v instanceof Collection) {
      sb.append('[');
      boolean first = true;
      for (Object x : (Collection<?>) v) {
        if (!first) sb.append(',');
        first = false;
        value(sb, x);
      }
      sb.append(']');
    } else if (v instanceof String) {
      str(sb, (String) v);
    } else if (v instanceof Uuid) {
      Uuid u = (Uuid) v;
      sb.append('"').append(String.format("%016x%016x", u.getMostSignificantBits(),
          u.getLeastSignificantBits())).append('"');
    } else if (v instanceof byte[]) {
      sb.append('"').append(HEX.formatHex((byte[]) v)).append('"');
    } else if (v instanceof ByteBuffer) {
      ByteBuffer b = ((ByteBuffer) v).duplicate();
      byte[] a = new byte[b.remaining()];
      b.get(a);
      sb.append('"').append(HEX.formatHex(a)).append('"');
    } else if (v instanceof MemoryRecords) {
      value(sb, ((MemoryRecords) v).buffer());
    } else if (v instanceof Double) {
      double d = (Double) v;
      sb.append(Double.isFinite(d) ? Double.toString(d) : "\"" + d + "\"");
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else {
      throw new IllegalStateException("cannot dump " + v.getClass());
    }
  }

  static void str(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
  }
}
