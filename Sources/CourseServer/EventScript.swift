/// The script serve puts into every page it serves, after the run's secret: it records the
/// learner's events on the page, with the device's time of each, and posts them to
/// `CourseServer.eventsPath` in small batches (every 10 events, 2 s after the first one waiting,
/// and when the page is hidden or left, with `keepalive` so the last batch outlives the page).
/// Names and payloads are the ones the LMS's own pages log: `page_view` on each load,
/// `play_video`/`pause_video` (`currentTime`), `seek_video` (`old_time`, `new_time`, `type`),
/// `speed_change_video` (`current_time`, `old_speed`, `new_speed`), `problem_check` on a
/// problem's submit (`problem_id`, `answers`). The block is serve's to say, from the page's path.
/// Pages opened from file:// or in an app have no secret and record nothing here.
enum EventScript {
    static let tag = """
        <script>
        (function () {
          var secret = document.querySelector('meta[name="coursepack-serve-secret"]');
          if (!secret || window.coursepackEvents || !window.fetch) return;
          var queue = [], timer = null, stopped = false;
          function send(leaving) {
            if (timer) { clearTimeout(timer); timer = null; }
            while (queue.length && !stopped) {
              var batch = queue.splice(0, 50);
              fetch("/_coursepack/events", { method: "POST", credentials: "same-origin", keepalive: !!leaving,
                headers: { "Content-Type": "application/json", "X-Coursepack-Secret": secret.getAttribute("content") },
                body: JSON.stringify({ page: location.pathname, events: batch }) })
                .then(function (response) { if (response.status >= 400 && response.status < 500) stopped = true; })
                .catch(function () {});
            }
          }
          function record(name, data) {
            if (stopped) return;
            queue.push({ name: name, timestamp: new Date().toISOString(), data: data || {} });
            if (queue.length >= 10) send(false);
            else if (!timer) timer = setTimeout(function () { send(false); }, 2000);
          }
          window.coursepackEvents = { record: record, send: send };
          function round(time) { return Math.round(time * 1000) / 1000; }
          function watch(video) {
            var last = 0, from = 0, rate = video.playbackRate;
            video.addEventListener("play", function () { record("play_video", { currentTime: round(video.currentTime) }); });
            video.addEventListener("pause", function () { record("pause_video", { currentTime: round(video.currentTime) }); });
            video.addEventListener("timeupdate", function () { if (!video.seeking) last = video.currentTime; });
            video.addEventListener("seeking", function () { from = last; });
            video.addEventListener("seeked", function () {
              record("seek_video", { old_time: round(from), new_time: round(video.currentTime), type: "onSlideSeek" });
              last = video.currentTime;
            });
            video.addEventListener("ratechange", function () {
              record("speed_change_video", { current_time: round(video.currentTime), old_speed: String(rate), new_speed: String(video.playbackRate) });
              rate = video.playbackRate;
            });
          }
          function answers(form) {
            var fields = {};
            Array.prototype.forEach.call(form.elements, function (input) {
              if (!input.name || ((input.type === "radio" || input.type === "checkbox") && !input.checked)) return;
              if (input.name.slice(-2) === "[]") (fields[input.name] = fields[input.name] || []).push(input.value);
              else fields[input.name] = input.value;
            });
            return fields;
          }
          function start() {
            record("page_view", { path: location.pathname, title: document.title });
            Array.prototype.forEach.call(document.querySelectorAll("video"), watch);
            Array.prototype.forEach.call(document.querySelectorAll("form.coursepack-problem"), function (form) {
              form.addEventListener("submit", function () {
                record("problem_check", { problem_id: form.getAttribute("data-usage-id") || "", answers: answers(form) });
                send(false);
              });
            });
          }
          if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
          addEventListener("pagehide", function () { send(true); });
          document.addEventListener("visibilitychange", function () { if (document.visibilityState === "hidden") send(true); });
        })();
        </script>
        """
}
