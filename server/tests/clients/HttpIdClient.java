// A Java client of the HTTP API with java.net.http (JDK 11+, no dependencies):
// 50 IDs from Leaf's route, as a Leaf client calls it, printed one a line.
// `cargo xtask test server` compiles and runs it with BASE (http://HOST:PORT) and
// TOKEN in the environment.
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

public class HttpIdClient {
    public static void main(String[] args) throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 50; i++) {
            // Leaf's route, as a Leaf client calls it.
            HttpRequest req = HttpRequest.newBuilder(URI.create(System.getenv("BASE") + "/api/snowflake/get/orders"))
                .header("Authorization", "Bearer " + System.getenv("TOKEN"))
                .timeout(Duration.ofSeconds(10)).build();
            HttpResponse<String> r = client.send(req, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) throw new RuntimeException("status " + r.statusCode());
            long id = Long.parseLong(r.body().trim());
            out.append(id).append('\n');
        }
        System.out.print(out);
    }
}
