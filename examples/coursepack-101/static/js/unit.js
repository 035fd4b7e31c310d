document.documentElement.classList.add("unit-script-ran");
