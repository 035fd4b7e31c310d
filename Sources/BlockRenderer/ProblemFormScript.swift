extension ProblemRenderer {
    /// The problem form's script: it keeps the answers in the page's storage as they are typed,
    /// and on submit hands them, with CAPA's field names, to whichever host shows the page (the
    /// iOS or Android app, `coursepack serve`, or else the page's own outbox); hosts call
    /// `window.coursepack.showResult` with the LMS's grade once the answer has been sent.
    static let formScript = """
        (function () {
          var form = document.querySelector("form.coursepack-problem");
          var key = form.getAttribute("data-storage-key");
          var usageID = form.getAttribute("data-usage-id");
          var status = form.querySelector(".coursepack-answer-status");
          var saved = {};
          try { saved = JSON.parse(localStorage.getItem(key) || "{}"); } catch (e) {}
          Array.prototype.forEach.call(form.elements, function (input) {
            if (!(input.name in saved)) return;
            if (input.type === "radio" || input.type === "checkbox") { input.checked = saved[input.name].indexOf(input.value) >= 0; }
            else { input.value = saved[input.name][0]; }
          });
          function current() {
            var answers = {};
            Array.prototype.forEach.call(form.elements, function (input) {
              if (!input.name) return;
              answers[input.name] = answers[input.name] || [];
              if ((input.type !== "radio" && input.type !== "checkbox") || input.checked) answers[input.name].push(input.value);
            });
            return answers;
          }
          function save() {
            try { localStorage.setItem(key, JSON.stringify(current())); } catch (e) {}
          }
          // Typed answers are kept as they are typed, not only when the field loses focus.
          form.addEventListener("input", save);
          form.addEventListener("change", save);
          function show(text) { status.textContent = text; }
          function keepHere(answer) {
            var outbox = [];
            try { outbox = JSON.parse(localStorage.getItem("coursepack:outbox") || "[]"); } catch (e) {}
            outbox.push(answer);
            try { localStorage.setItem("coursepack:outbox", JSON.stringify(outbox)); } catch (e) {}
            show("Saved on this device. It is sent to the course when your app syncs online.");
          }
          // The answer goes to whichever host shows the page: the iOS or Android app, the
          // `coursepack serve` origin, or else this page's storage. Fields are CAPA's own.
          form.addEventListener("submit", function (event) {
            event.preventDefault();
            var fields = {};
            var answers = current();
            Object.keys(answers).forEach(function (name) {
              fields[name] = name.slice(-2) === "[]" ? answers[name] : (answers[name][0] || "");
            });
            var answer = { usage_id: usageID, timestamp: new Date().toISOString(), fields: fields };
            var ios = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.coursepack;
            if (ios) { ios.postMessage(answer); show("Submitted. It reaches the course when you are online."); return; }
            if (window.CoursepackBridge && window.CoursepackBridge.postAnswer) {
              window.CoursepackBridge.postAnswer(JSON.stringify(answer));
              show("Submitted. It reaches the course when you are online.");
              return;
            }
            // `coursepack serve` puts a secret for its run into the pages it serves and takes
            // answers only with it: other sites' pages cannot read it, so cannot post answers.
            var secret = document.querySelector('meta[name="coursepack-serve-secret"]');
            if ((location.protocol === "http:" || location.protocol === "https:") && secret) {
              fetch("/_coursepack/answers", { method: "POST", credentials: "same-origin",
                headers: { "Content-Type": "application/json", "X-Coursepack-Secret": secret.getAttribute("content") },
                body: JSON.stringify(answer) })
                .then(function (response) {
                  if (!response.ok) throw new Error("HTTP " + response.status);
                  show("Submitted. It reaches the course when this device is online.");
                })
                .catch(function () { keepHere(answer); });
              return;
            }
            keepHere(answer);
          });
          // Hosts call this with the LMS's problem_check answer once it has been sent.
          window.coursepack = window.coursepack || {};
          var previous = window.coursepack.showResult;
          window.coursepack.showResult = function (id, result) {
            if (id !== usageID) { if (previous) previous(id, result); return; }
            var data = typeof result === "string" ? JSON.parse(result) : result;
            var score = data.current_score !== undefined ? " (" + data.current_score + "/" + data.total_possible + ")" : "";
            show((data.success === "correct" ? "Correct" : data.success === "incorrect" ? "Incorrect" : String(data.success || "Graded")) + score);
            status.setAttribute("data-result", data.success || "");
          };
        })();
        """
}
