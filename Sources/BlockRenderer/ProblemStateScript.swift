extension ProblemRenderer {
    /// Shows the learner's latest answer to the problem and what became of it (waiting to be
    /// sent, graded with the LMS's feedback, refused and why), read from the host: `coursepack
    /// serve`'s state endpoint (with the run's secret, as answers are posted), else the state
    /// file the device keeps beside the course (`../../.coursepack-sync/state/<type>/<name>.js`,
    /// loaded by a script element: a `file://` page cannot fetch), or an app calling
    /// `window.coursepack.showState(usage_id, state)`. A reset shows the blank problem; the
    /// answer stays on the device and the choice is remembered per block until a newer answer.
    ///
    /// The feedback was cleaned by the device (`FeedbackHTML`); it is parsed here into an inert
    /// document and cleaned again before it joins the page, and its form controls are disabled
    /// and unnamed, so they never join the learner's answer.
    static let stateScript = #"""
        (function () {
          var form = document.querySelector("form.coursepack-problem");
          if (!form) return;
          var usageID = form.getAttribute("data-usage-id");
          var resetKey = "coursepack:reset:" + usageID;
          var shown = null;
          function element(tag, className, text) {
            var made = document.createElement(tag);
            made.className = className;
            if (text) made.textContent = text;
            return made;
          }
          var box = element("section", "coursepack-state");
          box.setAttribute("aria-label", "Your last answer");
          box.hidden = true;
          var verdict = element("p", "coursepack-verdict");
          verdict.setAttribute("role", "status");
          var feedback = element("div", "coursepack-feedback");
          var reset = element("button", "coursepack-reset", "Reset: show the blank problem");
          var again = element("button", "coursepack-show-answer", "Show my last answer");
          reset.type = again.type = "button";
          again.hidden = true;
          box.appendChild(verdict);
          box.appendChild(feedback);
          box.appendChild(reset);
          form.parentNode.insertBefore(box, form.nextSibling);
          form.parentNode.insertBefore(again, box.nextSibling);
          var colours = { "correct": "#2e7d32", "incorrect": "#c62828", "partially-correct": "#b26a00" };
          var words = { "correct": "Correct", "incorrect": "Incorrect", "partially-correct": "Partially correct" };
          function describe(state) {
            if (state.state !== "graded") return state.message || "";
            var text = words[state.correctness] || "Graded";
            if (typeof state.earned === "number" && typeof state.possible === "number") {
              text += " (" + Math.round(state.earned * 100) / 100 + "/" + Math.round(state.possible * 100) / 100 + " points)";
            }
            if (typeof state.attempts_used === "number") text += ", attempts used: " + state.attempts_used;
            return text;
          }
          var dropped = /^(script|style|link|meta|base|iframe|frame|frameset|object|embed|applet|form|template|noscript|svg|math)$/i;
          var urlName = /(href|src|srcset|action|data|poster|background)$/;
          // Offline, the LMS's own paths lead nowhere: an image shows from a data: URL or as its
          // alt text, and a link leaves only for the web.
          function keptURL(name, value) {
            if (name === "href" || name === "xlink:href") return /^(https?:|mailto:|#)/.test(value);
            return name === "src" && /^data:image\//.test(value);
          }
          function inert(html) {
            var parsed = new DOMParser().parseFromString(html, "text/html");
            Array.prototype.forEach.call(parsed.body.querySelectorAll("*"), function (node) {
              if (dropped.test(node.tagName)) { node.remove(); return; }
              Array.prototype.slice.call(node.attributes).forEach(function (attribute) {
                var name = attribute.name.toLowerCase();
                var value = attribute.value.replace(/[\u0000-\u0020\u007f]/g, "").toLowerCase();
                var badURL = urlName.test(name) && !keptURL(name, value);
                var loads = name === "style" && /url\s*[(]|expression\s*[(]/.test(value);
                if (name.indexOf("on") === 0 || badURL || loads || ["id", "name", "for", "form", "srcdoc", "formaction"].indexOf(name) >= 0) {
                  node.removeAttribute(attribute.name);
                }
              });
              if (/^(input|select|textarea|button)$/i.test(node.tagName)) node.disabled = true;
            });
            var fragment = document.createDocumentFragment();
            while (parsed.body.firstChild) fragment.appendChild(document.adoptNode(parsed.body.firstChild));
            return fragment;
          }
          function fill(fields) {
            Array.prototype.forEach.call(form.elements, function (input) {
              if (!input.name || !(input.name in fields)) return;
              var values = fields[input.name] || [];
              if (input.type === "radio" || input.type === "checkbox") input.checked = values.indexOf(input.value) >= 0;
              else input.value = values.length ? values[0] : "";
            });
          }
          function apply(state) {
            shown = state || null;
            box.hidden = again.hidden = true;
            if (!shown) return;
            var dismissed = null;
            try { dismissed = localStorage.getItem(resetKey); } catch (e) {}
            if (dismissed === shown.answer_id) { again.hidden = false; return; }
            form.reset();
            fill(shown.fields || {});
            verdict.textContent = describe(shown);
            box.setAttribute("data-state", shown.state);
            box.setAttribute("data-correctness", shown.correctness || "");
            box.style.cssText = "border-left: 4px solid " + (colours[shown.correctness] || "#757575") + "; padding: 0.25em 1em; margin: 1em 0;";
            feedback.textContent = "";
            if (shown.state === "graded" && shown.feedback_html) feedback.appendChild(inert(shown.feedback_html));
            box.hidden = false;
          }
          reset.addEventListener("click", function () {
            if (shown) { try { localStorage.setItem(resetKey, shown.answer_id); } catch (e) {} }
            form.reset();
            try { localStorage.removeItem(form.getAttribute("data-storage-key")); } catch (e) {}
            box.hidden = true;
            again.hidden = false;
            again.focus();
          });
          again.addEventListener("click", function () {
            try { localStorage.removeItem(resetKey); } catch (e) {}
            apply(shown);
          });
          // A new answer makes the one shown old news until the host says what became of it.
          form.addEventListener("submit", function () { box.hidden = again.hidden = true; });
          window.coursepack = window.coursepack || {};
          var previous = window.coursepack.showState;
          window.coursepack.showState = function (id, state) {
            if (id !== usageID) { if (previous) previous(id, state); return; }
            apply(typeof state === "string" ? JSON.parse(state) : state);
          };
          var secret = document.querySelector('meta[name="coursepack-serve-secret"]');
          if ((location.protocol === "http:" || location.protocol === "https:") && secret) {
            fetch("/_coursepack/state?usage_id=" + encodeURIComponent(usageID), { credentials: "same-origin", cache: "no-store",
              headers: { "X-Coursepack-Secret": secret.getAttribute("content") } })
              .then(function (response) { if (!response.ok) throw new Error("HTTP " + response.status); return response.json(); })
              .then(function (record) { if (record && record.usage_id === usageID) apply(record.state); })
              .catch(function () {});
            return;
          }
          var parts = location.pathname.split("/");
          if (parts.length < 4 || parts[parts.length - 1] !== "index.html") return;
          var file = document.createElement("script");
          file.src = "../../.coursepack-sync/state/" + parts[parts.length - 3] + "/" + parts[parts.length - 2] + ".js";
          file.onload = function () {
            var records = window.coursepackStates || [];
            for (var i = records.length - 1; i >= 0; i--) {
              if (records[i] && records[i].usage_id === usageID) { apply(records[i].state); return; }
            }
          };
          (document.head || document.documentElement).appendChild(file);
        })();
        """#
}
