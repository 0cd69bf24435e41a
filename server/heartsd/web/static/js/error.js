// The page of an address that is not one (app.py's ERROR_PAGE): the header and language
// menu of every page, and a 404 said in the page's language (the server wrote it in English;
// other statuses keep the server's words).
import { header, showNotFound } from "./common.js";
import { t } from "./i18n.js";

const named = document.title.split(" · ")[0]; // the server's reason ("Not Found"), until said otherwise
header("error", null, () => named);
if (document.body.dataset.status === "404") {
  showNotFound(null, { message: () => t("no_page_here"), links: () => [["/leaderboard", t("leaderboard")]] });
}
