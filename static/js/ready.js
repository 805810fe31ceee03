// Loaded after every page script: marks the page ready for the keyboard (the browser tests wait
// for it, so a key pressed before the page scripts ran is not lost).
document.documentElement.dataset.ready = "1";
