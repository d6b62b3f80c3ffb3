// A Java client of the Thrift service, with the stubs `thrift --gen java
// server/thrift/Snowflake.thrift` writes (Debian's thrift-compiler 0.17.0) and
// Debian's libthrift-java 0.16.0, over TFramedTransport + TBinaryProtocol (the
// defaults of Twitter's clients). `cargo xtask test server` compiles and runs it:
//
//   java ThriftClient HOST PORT DATACENTER N
//
// It checks get_worker_id, get_datacenter_id (must be DATACENTER),
// get_timestamp (within 5 s of this machine's clock), N IDs from get_id
// (unique and increasing, with the node values in their bits) and that a bad
// user agent is a TApplicationException carrying the stable code; it prints
// the IDs, one a line, for the caller's uniqueness check. Exit status 1 on any
// failure.
import com.twitter.service.snowflake.gen.Snowflake;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
// 0.14 moved it here from org.apache.thrift.transport.
import org.apache.thrift.transport.layered.TFramedTransport;

public class ThriftClient {
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what);
        }
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        long datacenter = Long.parseLong(args[2]);
        int n = Integer.parseInt(args[3]);

        // Socket (read) and connect timeouts: 10 s each.
        TSocket socket = new TSocket(new TConfiguration(), host, port, 10_000, 10_000);
        TTransport transport = new TFramedTransport(socket);
        transport.open();
        try {
            Snowflake.Client client = new Snowflake.Client(new TBinaryProtocol(transport));

            long worker = client.get_worker_id();
            long dc = client.get_datacenter_id();
            long ts = client.get_timestamp();
            check(dc == datacenter, "get_datacenter_id " + dc + ", expected " + datacenter);
            check(Math.abs(ts - System.currentTimeMillis()) < 5_000, "get_timestamp " + ts);
            System.err.println("java: get_worker_id " + worker + ", get_datacenter_id " + dc
                + ", get_timestamp " + ts);

            StringBuilder out = new StringBuilder();
            long last = -1;
            for (int i = 0; i < n; i++) {
                long id = client.get_id("java-client");
                // twitter layout: datacenter in bits 17-21, worker in bits 12-16.
                check(id > last, "ID " + id + " after " + last);
                check(((id >> 17) & 31) == dc && ((id >> 12) & 31) == worker,
                    "ID " + id + " does not carry datacenter " + dc + " and worker " + worker);
                last = id;
                out.append(id).append('\n');
            }

            // The user agent must match [a-zA-Z][a-zA-Z\-0-9]*.
            for (String bad : new String[] {"1web", "", "web_1", "web 1"}) {
                try {
                    client.get_id(bad);
                    throw new IllegalStateException("agent '" + bad + "' was accepted");
                } catch (TApplicationException e) {
                    check(e.getType() == TApplicationException.UNKNOWN
                        && e.getMessage().contains("InvalidUserAgentError")
                        && e.getMessage().endsWith("[invalid_user_agent]"), "bad agent: " + e);
                }
            }
            // The connection still serves after the refusals.
            long after = client.get_id("java-client");
            check(after > last, "ID " + after + " after " + last);
            out.append(after).append('\n');
            System.err.println("java: " + (n + 1) + " IDs, increasing; bad agents refused with"
                + " TApplicationException [invalid_user_agent]");
            System.out.print(out);
        } finally {
            transport.close();
        }
    }
}
