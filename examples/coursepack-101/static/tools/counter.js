var count = 0;
document.getElementById("up").addEventListener("click", function () {
  document.getElementById("count").textContent = String(++count);
});
