#include "llm/http_client.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include <curl/curl.h>

#include "common/error.h"
#include "common/interrupt.h"

namespace mgk::llm {
namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw Error("libcurl failed to initialise (curl_global_init); the TLS library may be "
                  "missing or broken");
  });
}

struct BodySink {
  std::string* body;
  std::size_t limit;
  bool too_large = false;
};

// Returning less than it was given makes curl stop with CURLE_WRITE_ERROR.
size_t collect_body(char* data, size_t size, size_t count, void* out) {
  auto* sink = static_cast<BodySink*>(out);
  if (sink->body->size() + size * count > sink->limit) {
    sink->too_large = true;
    return 0;
  }
  sink->body->append(data, size * count);
  return size * count;
}

// Called by curl about once a second while idle, and often while data flows; a non-zero
// return aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
int check_cancel(void* cancel, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(cancel)->load() ? 1 : 0;
}

size_t collect_header(char* data, size_t size, size_t count, void* out) {
  auto* response = static_cast<HttpResponse*>(out);
  std::string line(data, size * count);
  // A new status line (after a 100 Continue or a redirect) starts a new header block.
  if (line.rfind("HTTP/", 0) == 0) {
    response->headers.clear();
    return size * count;
  }
  size_t colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string value = line.substr(colon + 1);
  const char* space = " \t\r\n";
  value.erase(0, value.find_first_not_of(space));
  value.erase(value.find_last_not_of(space) + 1);
  response->headers[name] = value;
  return size * count;
}

HttpResponse::Failure failure_kind(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return HttpResponse::Failure::kTimeout;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return HttpResponse::Failure::kNone;  // not a transport problem: the caller's mistake
    default:
      return HttpResponse::Failure::kConnection;
  }
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

std::string HttpResponse::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

HttpResponse http_post(const HttpRequest& request) {
  init_curl_once();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) throw Error("libcurl could not create a request handle (out of memory?)");

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&headers](const std::string& h) {
    curl_slist* next = curl_slist_append(headers.get(), h.c_str());
    if (!next) throw Error("libcurl could not allocate a request header");
    headers.release();
    headers.reset(next);
  };
  for (const auto& h : request.headers) add_header(h);
  add_header("Expect:");  // no 100-continue round trip for large prompts

  HttpResponse response;
  char error_text[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(request.connect_timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // signals and threads do not mix
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(c, CURLOPT_USERAGENT, "mgk/" MGK_VERSION);
  BodySink sink{&response.body, request.max_reply_bytes};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  if (request.cancel != nullptr) {
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, check_cancel);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, request.cancel);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &response);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_text);

  if (request.cancel != nullptr && request.cancel->load()) throw Interrupted();
  CURLcode code = curl_easy_perform(c);
  if (code == CURLE_ABORTED_BY_CALLBACK) throw Interrupted();
  if (sink.too_large) {
    HttpResponse failed;
    failed.failure = HttpResponse::Failure::kTooLarge;
    failed.failure_detail = "the reply passed " + std::to_string(request.max_reply_bytes >> 20) +
                            " MiB (decompressed)";
    return failed;
  }
  if (code != CURLE_OK) {
    std::string detail = error_text[0] ? error_text : curl_easy_strerror(code);
    HttpResponse::Failure kind = failure_kind(code);
    if (kind == HttpResponse::Failure::kNone)
      throw UsageError("cannot send to '" + request.url + "': " + detail +
                       "; check the endpoint's base URL");
    HttpResponse failed;
    failed.failure = kind;
    failed.failure_detail = detail;
    return failed;
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  return response;
}

}  // namespace mgk::llm
