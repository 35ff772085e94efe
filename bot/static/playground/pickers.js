// The playground's server and channel pickers open what is picked. A file of its own, not an inline
// onchange handler: the Content-Security-Policy runs no inline script (README, Privacy), and the page
// has pickers also when playground.js has no channel to run on.
document.querySelectorAll("select[data-autosubmit]").forEach((select) => {
  select.addEventListener("change", () => select.form.submit());
});
